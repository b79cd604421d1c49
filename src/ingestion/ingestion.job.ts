import { EnqueueOptions, JobQueue, JobState } from '../domain/job-queue.port';
import { FILE_INGEST_JOB, FILE_INGEST_LARGE_JOB } from '../domain/job-names';
import { FILE_LANES, FileLane, StoredFile } from '../domain/file.model';

export { FILE_INGEST_JOB, FILE_INGEST_LARGE_JOB };

export interface FileIngestJob {
  collectionId: string;
  fileId: string;
}

/** Each lane is a job name of its own, so each has its own queue and its own concurrency. */
const INGEST_JOB_OF_LANE: Record<FileLane, string> = { standard: FILE_INGEST_JOB, large: FILE_INGEST_LARGE_JOB };

/** Downloads and extractions that fail for a passing reason (5xx, reset, worker crash) get three tries. */
const INGEST_OPTIONS: EnqueueOptions = { attempts: 3, backoffMs: 1000 };

/** What decides a file's lane: bytes when known up front, pages when extraction finds them (a PDF's page tree). */
export interface LaneLimits {
  /** More bytes than this: the large lane. */
  largeBytes: number;
  /** A PDF of more pages than this: the large lane. */
  largePages: number;
}

export const laneForSize = (size: number, limits: LaneLimits): FileLane => (size > limits.largeBytes ? 'large' : 'standard');

/**
 * Queues ingestion of a file already stored as `pending`, in its lane. The job id is the file id,
 * so queuing the same file twice while a job for it exists is a no-op. `jobId` overrides it when
 * a job that ended without finishing the file still holds that id.
 */
export function enqueueIngestion(
  queue: JobQueue,
  job: FileIngestJob,
  lane: FileLane = 'standard',
  jobId: string = job.fileId,
): Promise<string> {
  return queue.enqueue<FileIngestJob>(INGEST_JOB_OF_LANE[lane], job, { ...INGEST_OPTIONS, jobId });
}

export interface EnsuredIngestion {
  /** A job was queued now (false: one was already waiting or running in a lane). */
  queued: boolean;
  jobId: string;
  /** The state of the file's job in its lane before. */
  state: JobState;
}

/**
 * Makes sure a `pending` or `processing` file has a job waiting or running in some lane, queuing
 * one in the file's lane otherwise. A job id that a finished job (completed, failed, stuck) still
 * holds would make the enqueue a no-op, so another is used then.
 */
export async function ensureIngestion(queue: JobQueue, file: Pick<StoredFile, 'id' | 'collectionId' | 'lane'>): Promise<EnsuredIngestion> {
  const states = new Map<FileLane, JobState>();
  for (const lane of FILE_LANES) {
    const state = await queue.state(INGEST_JOB_OF_LANE[lane], file.id);
    if (state === 'waiting' || state === 'active') return { queued: false, jobId: file.id, state };
    states.set(lane, state);
  }
  const state = states.get(file.lane)!;
  const jobId = state === 'missing' ? file.id : `${file.id}-${Date.now().toString(36)}`;
  await enqueueIngestion(queue, { collectionId: file.collectionId, fileId: file.id }, file.lane, jobId);
  return { queued: true, jobId, state };
}
