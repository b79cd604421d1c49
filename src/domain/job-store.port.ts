import type { JobClaiming, JobShare, QueueDepth } from './job-queue.port';

/** The part of a handler's JobClaiming a store calls. */
export type JobJoining = Pick<JobClaiming, 'claim'>;

/**
 * Where the embedded queue keeps its jobs: the `jobs` table of the SQLite file, or the `jobs`
 * collection of MongoDB. A job is addressed by its name and id, as Bull addresses it by queue
 * and id, so the same jobId may be used under two names.
 */
export interface JobKey {
  name: string;
  id: string;
}

/** Completed jobs are deleted, so a stored job is one of these. */
export type StoredJobState = 'waiting' | 'active' | 'failed';

export interface StoredJob extends JobKey {
  /** JSON text: every adapter round-trips job data through JSON, as Bull does. */
  data: string;
  state: StoredJobState;
  /** Tries started so far, counting the one the latest claim started. */
  attempts: number;
  maxAttempts: number;
  backoffMs: number;
  /** When a waiting job may be claimed (its delay or retry backoff). */
  runAt: Date;
  leaseUntil: Date | null;
  leaseToken: string | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Whose share it takes ('' and '' without one). */
  share: JobShare;
  /** Its turn in fair order; 0 for a job that waited for its time (a delay, a retry), taken first once due. */
  turn: number;
  /** In the lane of users who had nothing waiting (src/jobs/fair-turns.ts). */
  lane: boolean;
}

export type NewJob = Pick<StoredJob, 'name' | 'id' | 'data' | 'maxAttempts' | 'backoffMs' | 'runAt'> & {
  /** Absent: no share, no lane. */
  share?: JobShare;
};

/** A job claimed under `token`. */
export interface ClaimedJob {
  job: StoredJob;
  token: string;
  /** What `joining.claim` returned for it (claimSome), if it was called. */
  taken?: unknown;
  /** The job's data, parsed for `joining.claim`: the handler gets it as it is, not parsed again. */
  data?: unknown;
}

export abstract class JobStore {
  /**
   * Adds a waiting job unless one with this key exists; null means it existed (idempotent enqueue).
   * A job due at once gets its turn and lane by fairPlace (src/jobs/fair-turns.ts) over the jobs
   * of its name waiting in turn; a delayed one gets turn 0. Says whether the job went to the lane:
   * only then has the lane's worker anything to claim.
   */
  abstract insert(job: NewJob, now: Date): Promise<{ lane: boolean } | null>;
  /**
   * insert() as a synchronous write, for a store whose writes commit with the other stores'
   * (`commitsWithOtherStores`): called inside another store's write, it is stored or undone with
   * that write (a run and its job: RunStore.createWith). Absent elsewhere.
   */
  insertWithin?(job: NewJob, now: Date): { lane: boolean } | null;

  /**
   * Atomically takes the next job of `name` in fair order: a waiting job whose runAt has come, or
   * an active job whose lease expired because its worker died, lowest turn first (then longest
   * due); with `lane`, only a lane job. The job becomes active under `leaseToken` until
   * `leaseUntil`, with one more attempt counted.
   */
  abstract claim(name: string, now: Date, leaseUntil: Date, leaseToken: string, lane?: boolean): Promise<StoredJob | null>;

  /**
   * Claims as claim() does, once per token, for a worker with that many free slots; returns the
   * jobs taken (fewer once none is left), each with its token. By default all claims at once;
   * a store that can stop at the first that finds nothing (SQLite, in one transaction) does.
   * Tokens given as a function are asked for when the claim is made: a store that makes it later
   * (SQLite, at the end of the turn) counts the slots freed meanwhile. A store whose claims commit
   * with the other stores' writes (`commitsWithOtherStores`) calls `joining.claim` with each job it
   * takes that has a try left, inside the claim's transaction (JobClaiming), its answer returned as
   * the job's `taken`; a call that throws is undone alone and takes nothing. The others ignore it.
   */
  async claimSome(
    name: string,
    now: Date,
    leaseUntil: Date,
    leaseTokens: string[] | (() => string[]),
    lane?: boolean,
    _joining?: JobJoining,
  ): Promise<ClaimedJob[]> {
    const claimed = await Promise.all(
      (typeof leaseTokens === 'function' ? leaseTokens() : leaseTokens).map(async (token) => ({
        job: await this.claim(name, now, leaseUntil, token, lane),
        token,
      })),
    );
    return claimed.flatMap(({ job, token }) => (job ? [{ job, token }] : []));
  }

  /**
   * claimSome() as a synchronous write, for a store whose writes commit with the other stores'
   * (`commitsWithOtherStores`): called inside another store's write (a caller's run accepted with
   * a free slot: JobQueue.stage), the jobs it takes are claimed, or not, with that write. Absent elsewhere.
   */
  claimSomeWithin?(
    name: string,
    now: Date,
    leaseUntil: Date,
    leaseTokens: string[] | (() => string[]),
    lane?: boolean,
    joining?: JobJoining,
  ): ClaimedJob[];

  /*
   * The writes below act only while `leaseToken` still holds the job, so a worker whose lease
   * expired cannot undo the work of the one that took the job over. Each says whether it acted.
   */

  abstract renew(key: JobKey, leaseToken: string, leaseUntil: Date, now: Date): Promise<boolean>;
  /** The job succeeded: it is deleted, so the table only holds pending and failed work. */
  abstract complete(key: JobKey, leaseToken: string): Promise<boolean>;
  /** Back to waiting until `runAt` (with turn 0); the attempt stays counted. */
  abstract retry(key: JobKey, leaseToken: string, runAt: Date, error: string, now: Date): Promise<boolean>;
  abstract fail(key: JobKey, leaseToken: string, error: string, now: Date): Promise<boolean>;
  /** Hands the job back at shutdown: waiting again at once, and the interrupted try is not counted. */
  abstract release(key: JobKey, leaseToken: string, now: Date): Promise<boolean>;

  abstract get(key: JobKey): Promise<StoredJob | null>;
  /**
   * When a job of `name` next becomes claimable (a runAt or a lease expiry), or null if none is
   * pending; with `lane`, when a lane job next does (what the lane's claim takes: its worker, woken
   * by the other jobs' due times, would find nothing and ask again at once, for as long as a backlog lasts).
   */
  abstract nextDueAt(name: string, lane?: boolean): Promise<Date | null>;
  /** Deletes failed jobs last touched before `before`; returns how many. */
  abstract purgeFailed(before: Date): Promise<number>;
  /** Jobs of `name` by state; a waiting job whose runAt is after `now` counts as delayed. */
  abstract depth(name: string, now: Date): Promise<QueueDepth>;
  abstract ping(): Promise<void>;
  /**
   * True when the writes asked for in one turn of the event loop are committed together with the
   * other stores' writes of that turn on the same connection (SQLite's group commit): a job's
   * completion asked for beside a run's is stored, or not, with it.
   */
  readonly commitsWithOtherStores?: boolean;
}
