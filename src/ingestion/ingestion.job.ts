import { EnqueueOptions, JobQueue } from '../jobs/job-queue.port';
import { FILE_INGEST_JOB } from '../jobs/job-names';

export { FILE_INGEST_JOB };

export interface FileIngestJob {
  collectionId: string;
  fileId: string;
}

/** Downloads and extractions that fail for a passing reason (5xx, reset, worker crash) get three tries. */
const INGEST_OPTIONS: EnqueueOptions = { attempts: 3, backoffMs: 1000 };

/**
 * Queues ingestion of a file already stored as `pending`. The job id is the file id, so queuing the
 * same file twice while a job for it exists is a no-op. `jobId` overrides it when the reconciler
 * must queue a file whose earlier job ended without finishing it.
 */
export function enqueueIngestion(queue: JobQueue, job: FileIngestJob, jobId: string = job.fileId): Promise<string> {
  return queue.enqueue<FileIngestJob>(FILE_INGEST_JOB, job, { ...INGEST_OPTIONS, jobId });
}
