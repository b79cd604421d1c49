import type { Logger } from 'pino';
import type { JobClaiming, JobHandler } from '../../domain/job-queue.port';
import type { JobKey, StoredJob } from '../../domain/job-store.port';
import type { StoreCommits } from '../../domain/store-commits.port';
import { FAILED_RETENTION_MS } from '../job-policy';

// What the embedded queue (embedded-job-queue.adapter.ts) is given, and what it keeps for each of
// its workers (one per job name and lane) and each job one of them runs.

export interface EmbeddedJobQueueOptions {
  /** Jobs of one name this process runs at once, unless process() says otherwise (JOB_CONCURRENCY). */
  concurrency: number;
  logger: Logger;
  /**
   * How long a claim holds without renewal; it is renewed every third of this while the handler
   * runs. A process that dies leaves its jobs claimed this long before another run takes them.
   */
  leaseMs?: number;
  /**
   * The longest this process sleeps without looking at the store. Enqueues in this process wake
   * it at once and delays and retries set their own timer; this only catches work another process
   * sharing the store added.
   */
  pollIntervalMs?: number;
  /** How long close() waits for aborted handlers before handing their jobs back regardless. */
  shutdownGraceMs?: number;
  failedRetentionMs?: number;
  /**
   * Other processes' commits to the store (on SQLite, the process's one watch that its waiters
   * share: src/storage/embedded/commit-watch.ts). While no process tells this one of the jobs it
   * queues (the split layout started by hand without Redis), a worker with a free slot looks for
   * due jobs when another process committed. Before, it looked every pollIntervalMs (2 s): an
   * APP_ROLE=worker process stood idle up to that long whenever its queue had run dry.
   */
  commits?: StoreCommits;
}

export const DEFAULTS = {
  leaseMs: 30_000,
  pollIntervalMs: 2_000,
  shutdownGraceMs: 10_000,
  failedRetentionMs: FAILED_RETENTION_MS,
};
export interface Worker {
  name: string;
  /** Takes only lane jobs (src/jobs/fair-turns.ts), beside the worker of the same name that takes any. */
  lane: boolean;
  handler: JobHandler<unknown>;
  /** The handler's first write, made in each job's claim where the store commits them together (JobClaiming). */
  joining?: JobClaiming;
  concurrency: number;
  /** Callers of this process waiting for these jobs' outcomes: slots beyond concurrency (ProcessOptions.extraSlots). */
  extraSlots?: () => number;
  running: Map<string, RunningJob>;
  /** The claim loop in progress, if any: at most one per name, so concurrency is never overshot. */
  claiming?: Promise<void>;
  /** Set when new work may have arrived while the claim loop was busy. */
  recheck: boolean;
}

export interface RunningJob {
  job: StoredJob;
  key: JobKey;
  token: string;
  controller: AbortController;
  /** The handler returned or threw: a missing lease no longer means anything. */
  handlerDone: boolean;
  leaseLost: boolean;
  finished: Promise<void>;
  /** What the worker's `joining.claim` took in the job's claim, for the handler. */
  claimed: unknown;
  /** The job's completion, asked for by the handler's `finishing` beside its own last write. */
  completing?: Promise<boolean>;
}
