/**
 * Every job the service runs, in one place (as Immich keeps its job names): each has its own
 * queue, and in a process that runs workers each has exactly one `@Process` handler. A name here
 * without a handler, or a handler for a name not here, stops the boot naming it.
 */
export const FILE_INGEST_JOB = 'file.ingest';
export const RUN_JOB = 'workflow.run';

export const JOB_NAMES: readonly string[] = [FILE_INGEST_JOB, RUN_JOB];
