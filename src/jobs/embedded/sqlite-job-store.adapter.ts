import { GroupCommit, groupCommitOf } from '../../storage/embedded/group-commit';
import { SqliteDb } from '../../storage/embedded/sqlite-database';
import { clipError } from '../job-policy';
import { fairPlace, NO_SHARE } from '../fair-turns';
import { QueueDepth } from '../../domain/job-queue.port';
import { ClaimedJob, JobJoining, JobKey, JobStore, NewJob, StoredJob, StoredJobState } from '../../domain/job-store.port';

interface JobRow {
  name: string;
  id: string;
  data: string;
  state: StoredJobState;
  attempts: number;
  max_attempts: number;
  backoff_ms: number;
  run_at: string;
  lease_until: string | null;
  lease_token: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  share_user: string;
  share_flow: string;
  turn: number;
  lane: number;
}

/** What the `place` statement reads for fairPlace. */
interface PlaceRow {
  head: number | null;
  pending: 0 | 1;
  flow_last: number | null;
  user_flows: number | null;
}

/** The claim of the job `next` (a SELECT of its rowid) picks, if it is still to take. */
const takeJob = (next: string): string =>
  `UPDATE jobs
   SET state = 'active', attempts = attempts + 1, lease_until = @lease_until, lease_token = @token, updated_at = @now
   WHERE rowid = (${next}) AND (state = 'waiting' OR (state = 'active' AND lease_until <= @now))
   RETURNING *`;

const toJob = (row: JobRow): StoredJob => ({
  name: row.name,
  id: row.id,
  data: row.data,
  state: row.state,
  attempts: row.attempts,
  maxAttempts: row.max_attempts,
  backoffMs: row.backoff_ms,
  runAt: new Date(row.run_at),
  leaseUntil: row.lease_until ? new Date(row.lease_until) : null,
  leaseToken: row.lease_token,
  lastError: row.last_error,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
  share: { user: row.share_user, flow: row.share_flow },
  turn: row.turn,
  lane: row.lane === 1,
});

/**
 * Every write goes through the connection's group commit (group-commit.ts), with the run writes of
 * the same turn: a claim too, since the claim loop asks for all its free slots in one turn (one
 * autocommitted claim per job was the largest single cost of a run in the profile of a loaded
 * process). A job's fair turn is read and written in the transaction of its insert (the indexes of migrations 310 and 330).
 */
export class SqliteJobStore extends JobStore {
  private readonly statements;
  private readonly group: GroupCommit;
  override readonly commitsWithOtherStores = true;

  constructor(private readonly db: SqliteDb) {
    super();
    this.group = groupCommitOf(db);
    const held = "name = @name AND id = @id AND state = 'active' AND lease_token = @token";
    this.statements = {
      insert: db.prepare(
        `INSERT INTO jobs (name, id, data, state, attempts, max_attempts, backoff_ms, run_at, created_at, updated_at,
           share_user, share_flow, turn, lane)
         VALUES (@name, @id, @data, 'waiting', 0, @max_attempts, @backoff_ms, @run_at, @now, @now,
           @share_user, @share_flow, @turn, @lane)
         ON CONFLICT (name, id) DO NOTHING`,
      ),
      // Where a job due now goes (fairPlace), read in one statement: the head, whether its user has
      // anything pending and, only if so (CASE reads its branch alone), the flow's last turn and the
      // user's flows waiting. Five statements cost about twice as much (34 against 17 µs an enqueue
      // behind 30 waiting jobs). A job whose id exists already gets a place too, which its insert
      // (ON CONFLICT DO NOTHING) never writes. The flows are counted one index probe per flow, from
      // each flow to the next (jobs_flows): COUNT(DISTINCT) read every waiting job of the user, a
      // millisecond per enqueue behind a backlog of 3,000. A user is pending with a job in turn
      // (jobs_flows: the planner, without statistics, took jobs_in_turn and read every job in turn
      // of every user), else one waiting for its time or running (jobs_out_of_turn, migration 330:
      // `lease_until IS NULL`, true of every waiting row, lets the probe reach the user's entries;
      // the running jobs of all users are read there, as many as the workers' slots).
      place: db.prepare(
        `SELECT head, pending,
           CASE WHEN pending THEN (
             SELECT MAX(turn) FROM jobs
             WHERE name = @name AND state = 'waiting' AND turn > 0 AND share_user = @user AND share_flow = @flow)
           END AS flow_last,
           CASE WHEN pending THEN (
             WITH RECURSIVE flows(flow) AS (
               SELECT MIN(share_flow) FROM jobs WHERE name = @name AND state = 'waiting' AND turn > 0 AND share_user = @user
               UNION ALL
               SELECT (SELECT MIN(share_flow) FROM jobs
                       WHERE name = @name AND state = 'waiting' AND turn > 0 AND share_user = @user AND share_flow > flows.flow)
               FROM flows WHERE flows.flow IS NOT NULL)
             SELECT COUNT(flow) FROM flows)
           END AS user_flows
         FROM (SELECT
           (SELECT turn FROM jobs WHERE name = @name AND state = 'waiting' AND turn > 0 ORDER BY turn LIMIT 1) AS head,
           CASE WHEN EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_flows
               WHERE name = @name AND state = 'waiting' AND turn > 0 AND share_user = @user)
             THEN 1
             WHEN EXISTS (SELECT 1 FROM jobs
               WHERE name = @name AND state = 'waiting' AND turn = 0 AND lease_until IS NULL AND share_user = @user)
             THEN 1
             ELSE EXISTS (SELECT 1 FROM jobs WHERE name = @name AND state = 'active' AND share_user = @user)
           END AS pending)`,
      ),
      // Which job a claim takes and its take, in one statement run in the claim's transaction (group
      // commit, IMMEDIATE: the write lock is held from its start), so two workers (threads or processes
      // on the same file) never take the same job. Each branch reads one row off its partial index
      // before the three are compared: a delayed job once due (turn 0), the lowest turn, a job whose
      // lease expired; the row is then updated by rowid (the scalar subquery runs once: EXPLAIN QUERY
      // PLAN shows the same indexes as the SELECT alone, and a claim costs no more than the SELECT
      // and UPDATE it replaces, a statement fewer).
      take: db.prepare(
        takeJob(`SELECT rowid FROM (
             SELECT * FROM (
               SELECT rowid, turn, run_at FROM jobs
               WHERE name = @name AND state = 'waiting' AND turn = 0 AND run_at <= @now
               ORDER BY run_at, rowid LIMIT 1)
             UNION ALL
             SELECT * FROM (
               SELECT rowid, turn, run_at FROM jobs
               WHERE name = @name AND state = 'waiting' AND turn > 0 AND run_at <= @now
               ORDER BY turn, rowid LIMIT 1)
             UNION ALL
             SELECT * FROM (
               SELECT rowid, turn, lease_until FROM jobs
               WHERE name = @name AND state = 'active' AND lease_until <= @now
               ORDER BY lease_until LIMIT 1)
           ) ORDER BY turn, run_at, rowid LIMIT 1`),
      ),
      takeLane: db.prepare(
        takeJob(`SELECT rowid FROM jobs WHERE name = @name AND state = 'waiting' AND lane = 1 AND run_at <= @now
           ORDER BY turn, run_at, rowid LIMIT 1`),
      ),
      renew: db.prepare(`UPDATE jobs SET lease_until = @lease_until, updated_at = @now WHERE ${held}`),
      complete: db.prepare(`DELETE FROM jobs WHERE ${held}`),
      retry: db.prepare(
        `UPDATE jobs SET state = 'waiting', run_at = @run_at, turn = 0, lease_until = NULL, lease_token = NULL,
           last_error = @error, updated_at = @now
         WHERE ${held}`,
      ),
      fail: db.prepare(
        `UPDATE jobs SET state = 'failed', lease_until = NULL, lease_token = NULL, last_error = @error, updated_at = @now
         WHERE ${held}`,
      ),
      release: db.prepare(
        `UPDATE jobs SET state = 'waiting', attempts = attempts - 1, lease_until = NULL, lease_token = NULL,
           updated_at = @now
         WHERE ${held}`,
      ),
      get: db.prepare('SELECT * FROM jobs WHERE name = ? AND id = ?'),
      // A job with a turn was due when it got it (a delay or a retry has none), so the head's due time
      // stands for all of them: each branch reads one row off its partial index.
      nextDueAt: db
        .prepare(
          `SELECT MIN(due) FROM (
             SELECT MIN(run_at) AS due FROM jobs WHERE name = @name AND state = 'waiting' AND turn = 0
             UNION ALL
             SELECT * FROM (SELECT run_at FROM jobs WHERE name = @name AND state = 'waiting' AND turn > 0 ORDER BY turn LIMIT 1)
             UNION ALL
             SELECT MIN(lease_until) FROM jobs WHERE name = @name AND state = 'active')`,
        )
        .pluck(),
      nextLaneDueAt: db.prepare(`SELECT MIN(run_at) FROM jobs WHERE name = @name AND state = 'waiting' AND lane = 1`).pluck(),
      purgeFailed: db.prepare("DELETE FROM jobs WHERE state = 'failed' AND updated_at < ?"),
      depth: db.prepare(
        `SELECT
           COALESCE(SUM(state = 'waiting' AND run_at <= @now), 0) AS waiting,
           COALESCE(SUM(state = 'waiting' AND run_at > @now), 0) AS delayed,
           COALESCE(SUM(state = 'active'), 0) AS active,
           COALESCE(SUM(state = 'failed'), 0) AS failed
         FROM jobs WHERE name = @name`,
      ),
      ping: db.prepare('SELECT 1 FROM jobs LIMIT 1'),
    };
  }

  /** Writes a job's rows, and what a claim joins to them: a few pages (GroupCommit.run's `few`). */
  private fewRows<T>(work: () => T): Promise<T> {
    return this.group.run(work, true);
  }

  insert(job: NewJob, now: Date): Promise<{ lane: boolean } | null> {
    return this.fewRows(() => this.insertWithin(job, now));
  }

  /** The insert inside a write of the group commit: its own, or another store's (a run's, RunStore.createWith). */
  override insertWithin(job: NewJob, now: Date): { lane: boolean } | null {
    const share = job.share ?? NO_SHARE;
    const params = {
      name: job.name,
      id: job.id,
      data: job.data,
      max_attempts: job.maxAttempts,
      backoff_ms: job.backoffMs,
      run_at: job.runAt.toISOString(),
      now: now.toISOString(),
      share_user: share.user,
      share_flow: share.flow,
      turn: 0,
      lane: 0,
    };
    const state =
      job.runAt <= now ? (this.statements.place.get({ name: job.name, user: share.user, flow: share.flow }) as PlaceRow) : undefined;
    if (state) {
      // No user pending: no flow of theirs waits either (flow_last and user_flows were not read).
      const place = fairPlace({
        head: state.head ?? 0,
        flowLast: state.flow_last ?? 0,
        userFlows: state.user_flows ?? 0,
        userPending: state.pending === 1,
      });
      params.turn = place.turn;
      params.lane = place.lane && job.share ? 1 : 0;
    }
    return this.statements.insert.run(params).changes > 0 ? { lane: params.lane === 1 } : null;
  }

  claim(name: string, now: Date, leaseUntil: Date, leaseToken: string, lane = false): Promise<StoredJob | null> {
    const take = this.taker(name, now, leaseUntil, lane);
    // In the group commit's transaction, which holds the write lock: nothing comes between the read and the update.
    return this.fewRows(() => take(leaseToken));
  }

  /**
   * One write of the group commit for all the tokens, stopping at the first that finds nothing: a
   * worker with 16 free slots and one job waiting read the jobs' index 16 times, in 16 savepoints.
   */
  override claimSome(
    name: string,
    now: Date,
    leaseUntil: Date,
    leaseTokens: string[] | (() => string[]),
    lane = false,
    joining?: JobJoining,
  ): Promise<ClaimedJob[]> {
    return this.fewRows(() => this.claimSomeWithin(name, now, leaseUntil, leaseTokens, lane, joining));
  }

  /** claimSome() inside a write of the group commit: its own, or a run's accept (the queue's stage). */
  override claimSomeWithin(
    name: string,
    now: Date,
    leaseUntil: Date,
    leaseTokens: string[] | (() => string[]),
    lane = false,
    joining?: JobJoining,
  ): ClaimedJob[] {
    const take = this.taker(name, now, leaseUntil, lane);
    const claimed: ClaimedJob[] = [];
    for (const token of typeof leaseTokens === 'function' ? leaseTokens() : leaseTokens) {
      const job = take(token);
      if (!job) break;
      // A job past its last try is failed without its handler (the queue's runJob): nothing to take for it.
      claimed.push(joining && job.attempts <= job.maxAttempts ? this.within(joining, job, token) : { job, token });
    }
    return claimed;
  }

  /**
   * The handler's first write joins the claim's transaction (JobClaiming: the run's claim with its
   * job's), as a part of the group commit's write: with no savepoint while none throws; one that
   * throws is undone alone (the batch run again with savepoints), and its job is claimed without it.
   * A failure that rolled back the whole transaction (disk full, I/O) fails the claim with it.
   */
  private within(joining: JobJoining, job: StoredJob, token: string): ClaimedJob {
    let data: unknown;
    try {
      data = JSON.parse(job.data) as unknown;
    } catch {
      return { job, token };
    }
    const taken = this.group.part(() => joining.claim({ id: job.id, name: job.name, data }));
    return taken.ok ? { job, token, taken: taken.value, data } : { job, token, data };
  }

  /** Takes the next job of `name` under a token: to be called inside a write transaction. */
  private taker(name: string, now: Date, leaseUntil: Date, lane: boolean): (token: string) => StoredJob | null {
    const at = { name, now: now.toISOString(), lease_until: leaseUntil.toISOString(), token: '' };
    const take = this.statements[lane ? 'takeLane' : 'take'];
    return (token) => {
      at.token = token;
      const row = take.get(at) as JobRow | undefined;
      return row ? toJob(row) : null;
    };
  }

  async renew(key: JobKey, leaseToken: string, leaseUntil: Date, now: Date): Promise<boolean> {
    return this.write('renew', key, leaseToken, { lease_until: leaseUntil.toISOString(), now: now.toISOString() });
  }

  async complete(key: JobKey, leaseToken: string): Promise<boolean> {
    return this.write('complete', key, leaseToken, {});
  }

  async retry(key: JobKey, leaseToken: string, runAt: Date, error: string, now: Date): Promise<boolean> {
    return this.write('retry', key, leaseToken, {
      run_at: runAt.toISOString(),
      error: clipError(error),
      now: now.toISOString(),
    });
  }

  async fail(key: JobKey, leaseToken: string, error: string, now: Date): Promise<boolean> {
    return this.write('fail', key, leaseToken, { error: clipError(error), now: now.toISOString() });
  }

  async release(key: JobKey, leaseToken: string, now: Date): Promise<boolean> {
    return this.write('release', key, leaseToken, { now: now.toISOString() });
  }

  async get(key: JobKey): Promise<StoredJob | null> {
    const row = this.statements.get.get(key.name, key.id) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async nextDueAt(name: string, lane = false): Promise<Date | null> {
    const due = this.statements[lane ? 'nextLaneDueAt' : 'nextDueAt'].get({ name }) as string | null;
    return due ? new Date(due) : null;
  }

  async purgeFailed(before: Date): Promise<number> {
    return this.statements.purgeFailed.run(before.toISOString()).changes;
  }

  async depth(name: string, now: Date): Promise<QueueDepth> {
    return this.statements.depth.get({ name, now: now.toISOString() }) as QueueDepth;
  }

  async ping(): Promise<void> {
    this.statements.ping.get();
  }

  private write(
    statement: 'renew' | 'complete' | 'retry' | 'fail' | 'release',
    key: JobKey,
    leaseToken: string,
    params: Record<string, string>,
  ): Promise<boolean> {
    const bound = Object.assign({}, params, { name: key.name, id: key.id, token: leaseToken });
    return this.fewRows(() => this.statements[statement].run(bound).changes > 0);
  }
}
