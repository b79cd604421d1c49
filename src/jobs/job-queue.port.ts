/**
 * Background work (file ingestion, workflow runs) goes through this port. The embedded adapter
 * keeps pending jobs in the document store; the Bull adapter keeps them in Redis. Either way a job
 * that was accepted survives a restart of the process that accepted it.
 */
export interface EnqueueOptions {
  /** Idempotent enqueue: a second job with the same id while the first exists is ignored. */
  jobId?: string;
  /** Total tries including the first; default 3. */
  attempts?: number;
  /** Base of the exponential backoff between tries; default 1000 ms. */
  backoffMs?: number;
  delayMs?: number;
}

export interface JobContext<T> {
  id: string;
  name: string;
  data: T;
  /** 1 for the first try. */
  attempt: number;
  maxAttempts: number;
  /** Aborted when the queue shuts down; handlers stop at their next step. */
  signal: AbortSignal;
}

export type JobHandler<T = unknown> = (job: JobContext<T>) => Promise<void>;

export type JobState = 'waiting' | 'active' | 'completed' | 'failed' | 'missing';

export abstract class JobQueue {
  abstract enqueue<T>(name: string, data: T, options?: EnqueueOptions): Promise<string>;
  /**
   * Registers the handler for a job name. Only processes whose role runs workers call it; a
   * handler that throws an error with `retryable: false` (AppError) is not retried.
   */
  abstract process<T>(name: string, handler: JobHandler<T>, options?: { concurrency?: number }): void;
  /** Where a job is; the reconciler re-enqueues work the store has but the queue lost. */
  abstract state(name: string, jobId: string): Promise<JobState>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;
}
