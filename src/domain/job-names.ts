/**
 * Every job the service runs, in one place (as Immich keeps its job names): each has its own
 * queue, and in a process that runs workers each has exactly one `@Process` handler. A name here
 * without a handler, or a handler for a name not here, stops the boot naming it.
 */
export const FILE_INGEST_JOB = 'file.ingest';
/** The lane of large files (by size or page count), with a concurrency of its own: a slow file never holds small ones. */
export const FILE_INGEST_LARGE_JOB = 'file.ingest.large';
export const RUN_JOB = 'workflow.run';

export const JOB_NAMES: readonly string[] = [FILE_INGEST_JOB, FILE_INGEST_LARGE_JOB, RUN_JOB];
