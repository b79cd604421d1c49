import { GroupCommit, groupCommitOf } from '../../storage/embedded/group-commit';
import { SqliteDb } from '../../storage/embedded/sqlite-database';
import { clipError } from '../job-policy';
import { QueueDepth } from '../../domain/job-queue.port';
import { JobKey, JobStore, NewJob, StoredJob, StoredJobState } from '../../domain/job-store.port';

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
}

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
});

/**
 * Inserts and the writes that end or extend a claim go through the connection's group commit
 * (group-commit.ts), with the run writes of the same turn. A claim does not: the claim loop takes
 * one job after another, and a claim waiting for the next turn would slow every one of them.
 */
export class SqliteJobStore extends JobStore {
  private readonly statements;
  private readonly group: GroupCommit;

  constructor(db: SqliteDb) {
    super();
    this.group = groupCommitOf(db);
    const held = "name = @name AND id = @id AND state = 'active' AND lease_token = @token";
    this.statements = {
      insert: db.prepare(
        `INSERT INTO jobs (name, id, data, state, attempts, max_attempts, backoff_ms, run_at, created_at, updated_at)
         VALUES (@name, @id, @data, 'waiting', 0, @max_attempts, @backoff_ms, @run_at, @now, @now)
         ON CONFLICT (name, id) DO NOTHING`,
      ),
      // One statement, so two workers (threads or processes on the same file) never take the same
      // job. Each branch reads one row off its partial index before the two are compared.
      claim: db.prepare(
        `UPDATE jobs
         SET state = 'active', attempts = attempts + 1, lease_until = @lease_until, lease_token = @token, updated_at = @now
         WHERE rowid = (
           SELECT rowid FROM (
             SELECT * FROM (
               SELECT rowid, run_at FROM jobs
               WHERE name = @name AND state = 'waiting' AND run_at <= @now
               ORDER BY run_at, rowid LIMIT 1)
             UNION ALL
             SELECT * FROM (
               SELECT rowid, run_at FROM jobs
               WHERE name = @name AND state = 'active' AND lease_until <= @now
               ORDER BY lease_until LIMIT 1)
           ) ORDER BY run_at, rowid LIMIT 1)
         RETURNING *`,
      ),
      renew: db.prepare(`UPDATE jobs SET lease_until = @lease_until, updated_at = @now WHERE ${held}`),
      complete: db.prepare(`DELETE FROM jobs WHERE ${held}`),
      retry: db.prepare(
        `UPDATE jobs SET state = 'waiting', run_at = @run_at, lease_until = NULL, lease_token = NULL,
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
      nextDueAt: db
        .prepare(
          `SELECT MIN(due) FROM (
             SELECT MIN(run_at) AS due FROM jobs WHERE name = @name AND state = 'waiting'
             UNION ALL
             SELECT MIN(lease_until) FROM jobs WHERE name = @name AND state = 'active')`,
        )
        .pluck(),
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

  insert(job: NewJob, now: Date): Promise<boolean> {
    const params = {
      name: job.name,
      id: job.id,
      data: job.data,
      max_attempts: job.maxAttempts,
      backoff_ms: job.backoffMs,
      run_at: job.runAt.toISOString(),
      now: now.toISOString(),
    };
    return this.group.run(() => this.statements.insert.run(params).changes > 0);
  }

  async claim(name: string, now: Date, leaseUntil: Date, leaseToken: string): Promise<StoredJob | null> {
    const row = this.statements.claim.get({
      name,
      now: now.toISOString(),
      lease_until: leaseUntil.toISOString(),
      token: leaseToken,
    }) as JobRow | undefined;
    return row ? toJob(row) : null;
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

  async nextDueAt(name: string): Promise<Date | null> {
    const due = this.statements.nextDueAt.get({ name }) as string | null;
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
    const bound = { ...params, name: key.name, id: key.id, token: leaseToken };
    return this.group.run(() => this.statements[statement].run(bound).changes > 0);
  }
}
