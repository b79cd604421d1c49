import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobJoining } from '../../domain/job-store.port';
import { openSqliteDatabase, SqliteDb } from '../../storage/embedded/sqlite-database';
import { SqliteJobStore } from './sqlite-job-store.adapter';

/** A claim's statements, counted on the connection (better-sqlite3's `verbose`: savepoints among them). */
describe('SqliteJobStore claims with a joining write', () => {
  const name = 'test.claims';
  let dir: string;
  let db: SqliteDb;
  let store: SqliteJobStore;
  let statements: string[];
  const now = new Date();
  const later = new Date(now.getTime() + 60_000);
  /** The joining write: one row a job, refused (after its write) for the ids in `refuse`. */
  /** What ran inside the claim's transaction, BEGIN and COMMIT left out. */
  const inTransaction = () => statements.slice(statements.indexOf('BEGIN IMMEDIATE') + 1, statements.lastIndexOf('COMMIT'));
  const joining = (refuse: string[] = []): JobJoining & { tried: string[] } => {
    const tried: string[] = [];
    return {
      tried,
      claim: (job) => {
        tried.push(job.id);
        db.prepare('INSERT INTO taken (job) VALUES (?)').run(job.id);
        if (refuse.includes(job.id)) throw new Error('refused');
        return `took ${job.id}`;
      },
    };
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'job-store-claims-'));
    openSqliteDatabase(dir).close();
    statements = [];
    db = new Database(join(dir, 'service.db'), { verbose: (sql) => statements.push(String(sql).replace(/\s+/g, ' ').trim()) });
    db.exec('CREATE TABLE taken (job TEXT)');
    store = new SqliteJobStore(db);
    for (const id of ['a', 'b', 'c']) await store.insert({ name, id, data: '{}', maxAttempts: 3, backoffMs: 0, runAt: now }, now);
    statements.length = 0;
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('claims each job and its joining write with no savepoint: one statement a job besides the joining write', async () => {
    const join = joining();
    const claimed = await store.claimSome(name, now, later, ['t1', 't2', 't3'], false, join);

    expect(claimed.map(({ job, token, taken }) => [job.id, token, taken])).toEqual([
      ['a', 't1', 'took a'],
      ['b', 't2', 'took b'],
      ['c', 't3', 'took c'],
    ]);
    expect(statements.filter((sql) => /^(SAVEPOINT|RELEASE|ROLLBACK)/.test(sql))).toEqual([]);
    // Per job: its take (the next job chosen in it) and the joining write.
    expect(inTransaction()).toHaveLength(3 * 2);
    expect(db.prepare('SELECT job FROM taken ORDER BY job').pluck().all()).toEqual(['a', 'b', 'c']);
  });

  it('undoes alone a joining write that throws: every job is claimed, the others keep their writes', async () => {
    const join = joining(['b']);
    const claimed = await store.claimSome(name, now, later, ['t1', 't2', 't3'], false, join);

    expect(claimed.map(({ job, token, taken }) => [job.id, token, taken])).toEqual([
      ['a', 't1', 'took a'],
      ['b', 't2', undefined],
      ['c', 't3', 'took c'],
    ]);
    // The first pass stopped at b's throw and was rolled back; the second ran each joining write in a savepoint.
    expect(join.tried).toEqual(['a', 'b', 'a', 'b', 'c']);
    expect(db.prepare('SELECT job FROM taken ORDER BY job').pluck().all()).toEqual(['a', 'c']);
    const jobs = db.prepare('SELECT id, state, attempts, lease_token FROM jobs ORDER BY id').all();
    expect(jobs).toEqual([
      { id: 'a', state: 'active', attempts: 1, lease_token: 't1' },
      { id: 'b', state: 'active', attempts: 1, lease_token: 't2' },
      { id: 'c', state: 'active', attempts: 1, lease_token: 't3' },
    ]);
  });

  it('claims in fair order (turn, then the lane), one job a token, nothing once none waits', async () => {
    const claimed = await store.claimSome(name, now, later, ['t1', 't2', 't3', 't4']);
    expect(claimed.map(({ job }) => job.id)).toEqual(['a', 'b', 'c']);
    expect(await store.claimSome(name, now, later, ['t5'])).toEqual([]);
  });
});

/**
 * How SQLite reads the jobs table: every statement the store prepares, put to EXPLAIN QUERY PLAN.
 * A claim, a next-due lookup or a new job's fair turn that scans grows with the backlog, which may
 * be thousands of waiting runs.
 */
describe('SqliteJobStore query plans', () => {
  let dir: string;
  let db: SqliteDb;
  const plans = new Map<string, string>();

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'job-store-plans-'));
    db = openSqliteDatabase(dir);
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    const spy = jest.spyOn(db, 'prepare').mockImplementation((sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    });
    new SqliteJobStore(db);
    spy.mockRestore();
    for (const sql of prepared) {
      const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map(([, param]) => [param, '']));
      const positional = Array.from(sql.match(/\?/g) ?? [], () => '');
      const steps = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(Object.keys(named).length ? [named] : positional)) as {
        detail: string;
      }[];
      plans.set(sql.replace(/\s+/g, ' ').trim(), steps.map((step) => step.detail).join('; '));
    }
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const planOf = (pattern: RegExp): string => {
    const found = [...plans].filter(([sql]) => pattern.test(sql));
    expect(found).toHaveLength(1);
    return found[0][1];
  };

  it('reads an index in every statement but the ping', () => {
    for (const [sql, plan] of plans)
      if (sql !== 'SELECT 1 FROM jobs LIMIT 1') expect({ sql, plan }).toEqual({ sql, plan: expect.not.stringMatching(/SCAN jobs/) });
  });

  it('claims off the partial indexes of delayed jobs, jobs in turn and running jobs (by lease), and lane jobs off their own', () => {
    const claim = planOf(/^UPDATE jobs SET state = 'active'.*turn > 0/);
    for (const index of ['jobs_delayed', 'jobs_in_turn', 'jobs_out_of_turn']) expect(claim).toContain(`INDEX ${index} (name=?`);
    expect(planOf(/^UPDATE jobs SET state = 'active'.*lane = 1/)).toContain('COVERING INDEX jobs_lane (name=?)');
  });

  it('looks up when the next job is due off the same indexes', () => {
    const due = planOf(/^SELECT MIN\(due\)/);
    for (const index of ['jobs_delayed', 'jobs_in_turn', 'jobs_out_of_turn']) expect(due).toContain(`INDEX ${index} (name=?`);
    expect(planOf(/^SELECT MIN\(run_at\) FROM jobs .*lane = 1/)).toContain('COVERING INDEX jobs_lane (name=?)');
  });

  it("places a new job by its user's jobs alone: in turn (jobs_flows), else running or waiting for their time", () => {
    const place = planOf(/^SELECT head, pending/);
    expect(place).toContain('COVERING INDEX jobs_in_turn (name=? AND turn>?)');
    expect(place).toContain('COVERING INDEX jobs_flows (name=? AND share_user=?)');
    expect(place).toContain('INDEX jobs_out_of_turn (name=? AND state=? AND lease_until=? AND share_user=?)');
    expect(place).toContain('COVERING INDEX jobs_out_of_turn (name=? AND state=?)');
    // A read of the rows in turn would be every user's.
    expect(place).not.toContain('USING INDEX jobs_in_turn');
  });
});

/** Whether a new job goes to the lane: its user has nothing waiting or running (fair-turns.ts). */
describe('SqliteJobStore lane of a new job', () => {
  const name = 'test.lane';
  let dir: string;
  let db: SqliteDb;
  let store: SqliteJobStore;
  const now = new Date();
  const later = new Date(now.getTime() + 60_000);
  let ids = 0;
  const enqueue = (user: string, runAt = now) =>
    store.insert({ name, id: `j${++ids}`, data: '{}', maxAttempts: 1, backoffMs: 0, runAt, share: { user, flow: 'f' } }, now);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'job-store-lane-'));
    db = openSqliteDatabase(dir);
    store = new SqliteJobStore(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is the lane for a user with nothing pending, and not behind their job in turn', async () => {
    expect(await enqueue('u')).toEqual({ lane: true });
    expect(await enqueue('u')).toEqual({ lane: false });
  });

  it('is not the lane behind their running job, nor behind their job waiting for its time', async () => {
    await enqueue('running');
    expect(await store.claimSome(name, now, later, ['t'])).toHaveLength(1);
    expect(await enqueue('running')).toEqual({ lane: false });
    await enqueue('delayed', later);
    expect(await enqueue('delayed')).toEqual({ lane: false });
  });

  it('is the lane again once their jobs completed or failed, after a retry too (a failed job without a turn)', async () => {
    await enqueue('done');
    await enqueue('failed');
    await enqueue('retried');
    const [done, failed, retried] = await store.claimSome(name, now, later, ['t1', 't2', 't3']);
    expect(await store.complete({ name, id: done.job.id }, 't1')).toBe(true);
    expect(await store.fail({ name, id: failed.job.id }, 't2', 'boom', now)).toBe(true);
    expect(await store.retry({ name, id: retried.job.id }, 't3', now, 'again', now)).toBe(true);
    expect((await store.claimSome(name, now, later, ['t4'])).map(({ job }) => [job.id, job.turn])).toEqual([[retried.job.id, 0]]);
    expect(await store.fail({ name, id: retried.job.id }, 't4', 'boom', now)).toBe(true);
    expect(await enqueue('done')).toEqual({ lane: true });
    expect(await enqueue('failed')).toEqual({ lane: true });
    expect(await enqueue('retried')).toEqual({ lane: true });
  });
});
