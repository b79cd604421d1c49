import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openSqliteDatabase } from './sqlite-database';

/**
 * Another connection to `file` in a thread of its own (SQLite's waits block the thread that
 * waits), holding its write lock from the message it posts until `releaseAfterMs` (or until it is
 * terminated, when that is null).
 */
async function holdWriteLock(file: string, releaseAfterMs: number | null): Promise<Worker> {
  const holder = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const db = new (require('better-sqlite3'))(workerData.file);
     db.exec('BEGIN IMMEDIATE');
     parentPort.postMessage('held');
     if (workerData.releaseAfterMs === null) setInterval(() => {}, 60_000); // kept until terminated
     else {
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.releaseAfterMs);
       db.exec('ROLLBACK');
       db.close();
     }`,
    { eval: true, workerData: { file, releaseAfterMs } },
  );
  await once(holder, 'message');
  return holder;
}

describe('openSqliteDatabase', () => {
  let dataDir: string;
  let holder: Worker | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-open-'));
    openSqliteDatabase(dataDir).close();
  });
  afterEach(async () => {
    await holder?.terminate();
    holder = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('waits out a write lock held longer than one statement waits (busy_timeout, 5 s), then migrates and opens', async () => {
    holder = await holdWriteLock(join(dataDir, 'service.db'), 6_000);
    const db = openSqliteDatabase(dataDir);
    expect(db.prepare('SELECT count(*) FROM schema_migrations').pluck().get()).toBeGreaterThan(0);
    // What the run path's writes wait for a lock is one statement's wait again, not the open's.
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5_000);
    db.close();
  }, 40_000);

  it('fails once its wait is over, naming the file, and closes what it opened', async () => {
    holder = await holdWriteLock(join(dataDir, 'service.db'), null);
    let failure: unknown;
    try {
      openSqliteDatabase(dataDir, 'service.db', 1_000);
    } catch (error) {
      failure = error;
    }
    expect(failure).toMatchObject({
      code: 'SQLITE_BUSY',
      message: expect.stringMatching(/^The store .*service\.db stayed locked by another process for 1 s \(database is locked\)$/),
    });
  }, 40_000);

  it('fails at once on a file that is no database, without trying again', () => {
    writeFileSync(join(dataDir, 'other.db'), 'not a database, but long enough to have a header of sorts: '.repeat(20));
    expect(() => openSqliteDatabase(dataDir, 'other.db')).toThrow(expect.objectContaining({ code: 'SQLITE_NOTADB' }));
  });
});
