import { Page, PageRequest } from '../common/page';
import type { Run, RunStatus, TerminalRunStatus } from './run.model';
import type { RunError, StepRecord } from './step.model';

export interface RunFilter {
  /** Only runs of workflows this user holds a role on. */
  visibleTo?: string;
  workflowId?: string;
  status?: RunStatus;
  /** Only the sub-workflow runs this run started. */
  parentRunId?: string;
}

export interface LeaseState {
  /** False once another worker took the run over or it was deleted: stop working on it. */
  held: boolean;
  cancelRequested: boolean;
}

export interface RunCompletion {
  status: TerminalRunStatus;
  error: RunError | null;
  finishedAt: Date;
  /** Masked, and bounded like a step's output. */
  output?: unknown;
  /**
   * False: the run's steps keep their status, timings and errors, not what they received and
   * produced, nor their sealed state (the workflow's settings.stepData). Default true.
   */
  keepStepData?: boolean;
  /**
   * A caller of this process waits for the run's end (RunEvents.awaited): `complete` answers with
   * the finished run, read in its own write, which the caller is handed instead of reading it again.
   */
  read?: boolean;
  /**
   * False: no step of the run holds a sealed state (none was read back with the run, none sealed
   * since), so a success has none to drop and skips that write. Default true.
   */
  statesSealed?: boolean;
}

/**
 * Whether a claimed run can have steps to continue from: those an earlier claim recorded, or those
 * a retry copied from the run it repeats. A first claim of any other run has none to read.
 */
export const claimMayHaveSteps = (run: Pick<Run, 'claims' | 'retryOf'>): boolean => run.claims > 1 || run.retryOf !== null;

/** A claim that did not take the run because the workflow already runs its maximum at once. */
export const AT_CONCURRENCY_LIMIT = 'at-concurrency-limit' as const;

/** The queued runs (of one workflow, or of all): how many, counted up to a bound, and since when the oldest waits. */
export interface QueuedRuns {
  /** At most the `upTo` asked for: admission only needs to know whether a limit is reached. */
  count: number;
  /** Creation time of the oldest queued run; null when none is queued. */
  oldestCreatedAt: Date | null;
}

/** Which queued runs to count: one workflow's, one acting user's, or (empty) all. */
export type QueuedFilter =
  { workflowId: string; actingUserId?: undefined } | { actingUserId: string; workflowId?: undefined } | Record<string, never>;

/** What /metrics and /health/ready show of the run queue; counts stop at this many. */
const QUEUE_GAUGE_COUNT_BOUND = 1_000_000;

/** How many runs are queued (in every process sharing the store) and how long the oldest has waited. */
export async function runQueueOf(store: RunStore, now = Date.now()): Promise<{ queued: number; oldestAgeSeconds: number }> {
  const { count, oldestCreatedAt } = await store.queued({}, QUEUE_GAUGE_COUNT_BOUND);
  return { queued: count, oldestAgeSeconds: oldestCreatedAt ? Math.max(0, (now - oldestCreatedAt.getTime()) / 1000) : 0 };
}

/** Where a listing for the reconciler stopped: the next page starts after this run (by time, then id). */
export interface RunCursor {
  at: Date;
  id: string;
}

export abstract class RunStore {
  /**
   * Inserts a queued run, with the steps it starts from (a retry's reused steps). With an
   * idempotency key already used on the workflow since `reuseSince`, inserts nothing and returns
   * the earlier run (`created: false`); an older use of the key is forgotten so it can start a new run.
   */
  abstract create(run: Run, reuseSince: Date): Promise<{ created: boolean; run: Run }>;
  /**
   * create() with `alongside` (another store's synchronous write on the same connection: the run's
   * job, JobQueue.stage) run in the same write once the run is inserted: both are stored, or
   * neither, in one commit. Not called when the key named an earlier run. Absent where the stores
   * do not commit together (MongoDB).
   */
  createWith?(run: Run, reuseSince: Date, alongside: () => void): Promise<{ created: boolean; run: Run }>;
  /** The run an idempotency key started on the workflow since `since`, if any (what `create` would answer with). */
  abstract byIdempotencyKey(workflowId: string, key: string, since: Date): Promise<Run | null>;
  /** The run with its steps in execution order (their sealed state included). */
  abstract get(id: string): Promise<Run | null>;
  /** Only the run's status, for those who wait on it: no steps, no payloads. */
  abstract status(id: string): Promise<RunStatus | null>;
  /** Newest first, without steps, test definitions and output. */
  abstract list(filter: RunFilter, page: PageRequest): Promise<Page<Run>>;
  /**
   * Moves a claimable run to running under `owner` until `leaseUntil` and returns it with its
   * steps (no longer parked): a queued run, a waiting one whose `resumeAt` has come, or a running
   * one whose lease expired or that this owner already holds. With `maxRunning`, only while fewer
   * runs of its workflow than that hold a place, that is are running under a live lease (sub-workflow
   * runs aside), atomically: two workers cannot both take the last place; otherwise
   * AT_CONCURRENCY_LIMIT and nothing changes. Null when not claimable.
   *
   * A sub-workflow run is claimed without a limit and holds no place: it runs inside the place of
   * the parent that waits for it, and waiting for a place its parent holds (a workflow that runs
   * itself) would never end.
   */
  abstract claim(
    id: string,
    owner: string,
    leaseUntil: Date,
    now: Date,
    maxRunning?: number,
  ): Promise<Run | typeof AT_CONCURRENCY_LIMIT | null>;
  /**
   * claim, synchronously, inside a write of the job store that shares this store's connection and
   * transactions (SQLite): the run's claim joins its job's (JobClaiming), one commit where there were
   * two. Unlike claim, a run running under `owner`'s own live lease is not taken (a second job of
   * the run taken in the same claim leaves it to the first). Absent where writes are not synchronous.
   */
  claimWithin?(id: string, owner: string, leaseUntil: Date, now: Date, maxRunning?: number): Run | typeof AT_CONCURRENCY_LIMIT | null;
  /**
   * A queued (or due waiting) run refused a place under its workflow's concurrency limit waits,
   * parked, under `jobId` (a late safety-net job) for `unparkOldest` to hand it a place. False
   * when the run is no longer queued or waiting.
   */
  abstract park(id: string, jobId: string): Promise<boolean>;
  /**
   * A place of the workflow freed: its oldest parked run is unparked under the job id
   * `<run id><jobSuffix>` and returned, in one atomic step, so that places freed at once go to
   * distinct runs, oldest first. Null when none is parked.
   */
  abstract unparkOldest(workflowId: string, jobSuffix: string): Promise<Run | null>;
  abstract renewLease(id: string, owner: string, leaseUntil: Date): Promise<LeaseState>;
  /** Writes steps (insert or replace by node id) while the owner holds the lease. */
  abstract recordSteps(id: string, owner: string, steps: StepRecord[]): Promise<LeaseState>;
  /**
   * Writes the last steps and the terminal state in one go, if the owner still holds the lease.
   * A run that succeeded needs no sealed state any more: its steps' state is dropped; with
   * `keepStepData: false` their inputs and outputs go too. False when the owner no longer holds
   * the lease; with `completion.read`, the finished run as `get` reads it; true otherwise.
   */
  abstract complete(id: string, owner: string, steps: StepRecord[], completion: RunCompletion): Promise<Run | boolean>;
  /**
   * Parks a running run as `waiting` until `resumeAt` under a new job, with its last steps, if the
   * owner holds it and nobody asked to cancel it meanwhile (a cancel asked for while it ran must not
   * sleep with it until it resumes: its worker ends it instead).
   */
  abstract suspend(id: string, owner: string, steps: StepRecord[], resumeAt: Date, jobId: string): Promise<boolean>;
  /**
   * A person's decision ends a step's wait (an approval): while the run is `waiting` and its step
   * `nodeId` is `waiting` with the sealed state `expectedState` (nobody decided since it was read),
   * the step gets the decision's `state` and `output`, and the run is due at `now` under the job
   * `jobId`. False when anything changed meanwhile: decided already, resumed, canceled. This
   * compare-and-set is what lets one decision through and refuses every later one.
   */
  abstract decideWaitingStep(
    id: string,
    nodeId: string,
    expectedState: string,
    decided: { state: string; output: unknown },
    jobId: string,
    now: Date,
  ): Promise<boolean>;
  /**
   * The waiting steps of type `type` of waiting runs (of workflows `visibleTo` holds a role on),
   * oldest run first, at most `limit`: each with its run (no steps) and the step without its state.
   */
  abstract listWaitingSteps(filter: { type: string; visibleTo?: string }, limit: number): Promise<{ run: Run; step: StepRecord }[]>;
  /** Gives a claimed run back to the queue (the worker is stopping); true when it was ours. Its steps stay. */
  abstract release(id: string, owner: string): Promise<boolean>;
  /**
   * A queued or waiting run becomes canceled at once; a running one gets `cancelRequested` for its
   * worker to honour at its next step. Returns the run after the change, or null when it does not exist.
   */
  abstract requestCancel(id: string, now: Date): Promise<Run | null>;
  /**
   * Queued runs created before `createdBefore`, oldest first (by creation, then id), after the
   * `after` cursor ({ createdAt, id } of the last run of the previous page): candidates whose job
   * may be lost.
   */
  abstract listQueued(createdBefore: Date, limit: number, after?: RunCursor): Promise<Run[]>;
  /** Waiting runs due before `dueBefore`, soonest first (by `resumeAt`, then id), after the `after` cursor: candidates whose job may be lost. */
  abstract listDueWaiting(dueBefore: Date, limit: number, after?: RunCursor): Promise<Run[]>;
  /** Running runs whose lease ended before `now`, oldest first. */
  abstract listExpiredLeases(now: Date, limit: number): Promise<Run[]>;
  /**
   * Puts a running run whose lease is still expired and still held by `leaseOwner` (its worker was
   * lost) back to queued under a new job id. False when anything changed meanwhile.
   */
  abstract requeueExpired(id: string, leaseOwner: string | null, jobId: string, now: Date): Promise<boolean>;
  /**
   * Queued runs (parked ones included), of `workflowId`, of those acting as `actingUserId`, or of
   * every workflow, counted up to `upTo` (an index range of at most that many entries: cheap enough
   * for every webhook call). One filter at a time.
   */
  abstract queued(filter: QueuedFilter, upTo: number): Promise<QueuedRuns>;
  /**
   * The most queued runs (parked ones included) acting as any one user: how full the fullest share
   * of RUNS_MAX_QUEUED_PER_USER is; 0 when nothing is queued. Reads the index of queued runs by
   * user, so it costs in proportion to the runs queued: for /metrics, not for every call.
   */
  abstract queuedPerUserMax(): Promise<number>;
  /**
   * Deletes a run that is still queued and was never claimed, with its steps (a retry's reused ones):
   * its admission is withdrawn because the queue did not take its job. False when a worker got it
   * meanwhile (the job did reach the queue) or it is gone: then it stands.
   */
  abstract discardQueued(id: string): Promise<boolean>;
  /** Sets the job id of a queued or waiting run. */
  abstract setJobId(id: string, jobId: string): Promise<void>;
  /** Ends a run the service gave up on (lost too many workers); only while it is not terminal. */
  abstract abandon(id: string, error: RunError, now: Date): Promise<boolean>;
  abstract deleteForWorkflow(workflowId: string): Promise<void>;
  /**
   * Deletes finished runs (succeeded, failed, canceled), with their steps and sealed state, that
   * finished before `finishedBefore` or lie beyond the newest `keepPerWorkflow` finished runs of
   * their workflow; at most `limit` in one call (the pruner calls again while it gets `limit`).
   * Queued, running and waiting runs are never touched. Returns how many runs went.
   */
  abstract prune(options: { finishedBefore?: Date; keepPerWorkflow?: number; limit: number }): Promise<number>;
}
