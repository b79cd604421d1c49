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
