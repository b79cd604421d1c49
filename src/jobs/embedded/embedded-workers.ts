import type { Logger } from 'pino';
import type { EnqueueOptions, JobClaiming, JobHandler } from '../../domain/job-queue.port';
import type { JobKey, NewJob, StoredJob } from '../../domain/job-store.port';
import type { StoreCommits } from '../../domain/store-commits.port';
import { FAILED_RETENTION_MS, resolveEnqueueOptions } from '../job-policy';

// What the embedded queue (embedded-job-queue.adapter.ts) is given, what it keeps for each of
// its workers (one per job name and lane) and each job one of them runs, how many slots a worker
// has, and a job as it is stored.

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

/** A worker's slots for waiting callers, at most, per slot of its concurrency (see slots()). */
export const EXTRA_SLOTS_PER_SLOT = 3;

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
  /** Slots taken by claims made in runs' accepts (JobQueue.stage) whose transactions are not yet answered. */
  reserved: number;
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
  /** The job's data as its claim parsed it for the handler's first write (ClaimedJob.data), not parsed again. */
  data?: unknown;
  /** The job's completion, asked for by the handler's `finishing` beside its own last write. */
  completing?: Promise<boolean>;
}

/**
 * The jobs a worker runs at once now: its concurrency, and one more for each caller of this process
 * waiting for a job's outcome (ProcessOptions.extraSlots), up to EXTRA_SLOTS_PER_SLOT times the
 * concurrency. A `?wait=` call holds one of the slots for its whole run, its upstream calls
 * included: with 4 slots and 50 callers, 46 waited in the queue (p50 148 ms of a 162 ms call) while
 * the process had CPU to spare, and under load each run's wait for a core held its slot longer.
 * Counted when the claim is made, like the free slots; the lane keeps its own concurrency.
 */
export function slots(worker: Worker): number {
  const waiting = worker.extraSlots?.() ?? 0;
  return worker.concurrency + Math.min(Math.max(0, waiting), EXTRA_SLOTS_PER_SLOT * worker.concurrency);
}

/**
 * The slots a claim may take now: the worker's slots less the jobs it runs and the claims reserved
 * in accepts. A job whose completion is staged (its handler called `finishing`) leaves its slot to
 * the claim of that turn, which then commits with the completion, though the job stays tracked
 * until its handler returns; at most one such job per slot, so no more handlers than twice the
 * slots run at once, and never more than the slots that are not finishing.
 */
export function freeSlots(worker: Worker): number {
  const total = slots(worker);
  let finishing = 0;
  for (const running of worker.running.values()) if (running.completing) finishing++;
  return total - worker.running.size + Math.min(finishing, total) - worker.reserved;
}

/** A job as stored, asked for now (`at`). */
export function newJob<T>(name: string, data: T, options?: EnqueueOptions): NewJob & { at: Date } {
  const resolved = resolveEnqueueOptions(name, options);
  const now = Date.now();
  return {
    name,
    id: resolved.jobId,
    data: JSON.stringify(data ?? null),
    maxAttempts: resolved.attempts,
    backoffMs: resolved.backoffMs,
    runAt: new Date(now + resolved.delayMs),
    share: resolved.share,
    at: new Date(now),
  };
}
