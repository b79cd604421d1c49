/**
 * Background work (file ingestion, workflow runs) goes through this port. The embedded adapter
 * keeps pending jobs in the document store; the Bull adapter keeps them in Redis. Either way a job
 * that was accepted survives a restart of the process that accepted it. Handlers are service
 * methods marked `@OnJob(name)` (src/jobs/on-job.decorator.ts), bound with process() at boot.
 */
export interface EnqueueOptions {
  /** Idempotent enqueue: a second job with the same id while the first exists is ignored. */
  jobId?: string;
  /** Total tries including the first; default 3. */
  attempts?: number;
  /** Base of the exponential backoff between tries; default 1000 ms. */
  backoffMs?: number;
  delayMs?: number;
  /**
   * Whose share of the workers the job takes: jobs of a name are taken fairly across users, and
   * across flows (workflows) within a user, rather than first come first served (the rule:
   * src/jobs/fair-turns.ts). Without it the job is one of a single first-come-first-served share.
   */
  share?: JobShare;
}

/** A user (whose rights the job uses) and a flow of theirs (the workflow). */
export interface JobShare {
  user: string;
  flow: string;
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
  /**
   * Offered by a queue whose jobs are stored in the same transactions as the handler's own writes
   * (the embedded queue on SQLite): called in the turn the handler asks for its last write, it
   * completes the job in that write's transaction, one commit where there were two.
   * From then on the job is done whatever the handler does: a later failure is logged, not retried.
   */
  finishing?: () => void;
  /** What the handler's `JobClaiming.claim` returned in the job's claim, if it was called and took something. */
  claimed?: unknown;
}

export type JobHandler<T = unknown> = (job: JobContext<T>) => Promise<void>;

/**
 * A handler's first write, joined to the job's claim where the queue stores its jobs in the same
 * transactions as the handler's own writes (the embedded queue on SQLite; elsewhere it is never
 * called): `claim` runs synchronously inside the transaction that takes the job, and what it returns
 * reaches the handler as `claimed` (undefined: the handler does it itself, as without the hook).
 * One commit where there were two, for every job. `claim` must act only through that store (its
 * writes are undone with the job's claim if that fails, and it is called again when the claim is
 * retried) and read memory without changing it. `release` undoes what it took when the queue hands
 * the job back without calling the handler (it stopped while claiming).
 */
export interface JobClaiming<T = unknown, C = unknown> {
  claim(job: { id: string; name: string; data: T }): C | undefined;
  release(claimed: C): Promise<void>;
}

/**
 * An enqueue made part of another store's write (JobQueue.stage): `write` inserts the job,
 * synchronously, inside that write (RunStore.createWith), so the two are stored or undone together,
 * and, with a worker of this process free, claims it there too; `write` may be called again when
 * the write is retried. Once that write is answered, exactly one of the others is called:
 * `committed` (it committed: the claimed job starts, or the workers hear of it; nothing if the job
 * existed) or `undone` (it threw or did not commit).
 */
export interface StagedEnqueue {
  write(): void;
  committed(): void;
  undone(): void;
}

export interface ProcessOptions {
  concurrency?: number;
  claiming?: JobClaiming;
  /**
   * How many callers of this process wait now for the outcome of jobs of this name (`?wait=`, chat
   * and MCP tool calls waiting on runs): the embedded queue runs up to that many jobs beyond
   * `concurrency`, at most EXTRA_SLOTS_PER_SLOT times as many again (see EmbeddedJobQueue). A waiting
   * caller holds its connection until its run ends, so these slots grow only with callers who wait,
   * never with a backlog of jobs nobody waits for. Bull keeps its fixed concurrency.
   */
  extraSlots?: () => number;
}

/**
 * `waiting` covers delayed jobs; `missing`: no job has the id (enqueue it again under it); `stuck`:
 * the queue holds the job's data but in none of its lists (Redis lost a write), so it will never
 * run and its id stays taken: like a finished job, its work needs a new job id.
 */
export type JobState = 'waiting' | 'active' | 'completed' | 'failed' | 'stuck' | 'missing';

/** How many jobs of one name are where: due (`waiting`), not yet due (`delayed`: a delay or a retry's backoff), running, failed and kept. */
export interface QueueDepth {
  waiting: number;
  delayed: number;
  active: number;
  failed: number;
}

export abstract class JobQueue {
  abstract enqueue<T>(name: string, data: T, options?: EnqueueOptions): Promise<string>;
  /**
   * enqueue() as a write to run inside another store's (StagedEnqueue), offered where the queue's
   * jobs commit with the other stores' writes (the embedded queue on SQLite): one commit for a run
   * and its job, and never one without the other. Undefined elsewhere (Bull, the embedded queue on
   * MongoDB): the caller enqueues after its own write.
   * @throws AppError UNAVAILABLE from `write` when the job's insert fails (the other store's write is undone with it)
   */
  stage?<T>(name: string, data: T, options?: EnqueueOptions): StagedEnqueue | undefined;
  /**
   * Binds the handler of a job name, run `concurrency` at once in this process, plus as many again
   * for jobs in the lane of users who had nothing waiting (src/jobs/fair-turns.ts): the queue calls it directly with each job's context, its
   * shutdown signal and attempts (a handler that throws an error with `retryable: false`
   * (AppError) is not retried; one interrupted by shutdown is handed back without spending a try).
   * JobsModule binds the `@OnJob` methods it finds once the application has bootstrapped, so no
   * job meets a module that has not finished its init; tests bind functions directly.
   */
  abstract process<T>(name: string, handler: JobHandler<T>, options?: ProcessOptions): void;
  /** Where a job is; the reconciler re-enqueues work the store has but the queue lost. */
  abstract state(name: string, jobId: string): Promise<JobState>;
  /** Jobs of `name` by state, for the queue-depth gauge of /metrics. */
  abstract depth(name: string): Promise<QueueDepth>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;

  /** Which queue this is, without secrets; processes sharing a store compare it at boot. */
  describe(): string {
    return 'in-process';
  }

  /**
   * The id of the store whose runs this queue carries. A queue kept in the store itself needs no
   * pairing; a shared one (Redis) holds `storeId` for `leaseMs` unless another store's id holds it
   * under a lease that has not run out, and answers the id that holds it.
   */
  async pairStore(storeId: string, _leaseMs: number): Promise<string> {
    return storeId;
  }
}
