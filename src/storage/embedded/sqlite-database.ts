import Database from 'better-sqlite3';
import { join } from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import { makeDirectory } from '../../config/make-directory';
import { MIGRATIONS } from './migrations';
import type { Migration } from './migrations/migration';

export type SqliteDb = Database.Database;
export type SqliteStatement = Database.Statement;

/** How long one statement waits for another connection's lock before it fails busy. */
const BUSY_TIMEOUT_MS = 5_000;
/** How long an open waits, in all, for the file's locks held elsewhere (another process migrating it, an open transaction). */
export const OPEN_WAIT_MS = 30_000;
const BUSY = /^SQLITE_BUSY/;

/**
 * Opens the one SQLite file of the embedded deployment: WAL so readers never wait for the writer,
 * sqlite-vec loaded for the vector index, and versioned migrations applied in order.
 *
 * Processes opening the file together wait for each other once, for up to `waitMs` in all: an
 * attempt that finds a lock held (past busy_timeout, or at once where SQLite does not wait, as
 * when two connections switch a new file to WAL together) is made again until then. Each store of
 * a process used to open the file again after a failed open, 5 s each, so a held lock cost a boot
 * or the CLI up to 50 s before it failed, and three processes booting on an empty store under load
 * could each give up on the one migrating it.
 * @throws Error naming the file, when its locks stayed held for `waitMs` (`code` SQLITE_BUSY)
 */
export function openSqliteDatabase(dataDir: string, fileName = 'service.db', waitMs = OPEN_WAIT_MS): SqliteDb {
  makeDirectory(dataDir);
  const file = fileName === ':memory:' ? ':memory:' : join(dataDir, fileName);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const db = new Database(file);
    try {
      return prepared(db, Math.max(1, Math.min(BUSY_TIMEOUT_MS, deadline - Date.now())));
    } catch (error) {
      // Not a database, or its locks held: the handle goes with the failure.
      db.close();
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !BUSY.test(code)) throw error;
      if (Date.now() >= deadline) {
        const message = `The store ${file} stayed locked by another process for ${Math.round(waitMs / 1000)} s (${(error as Error).message})`;
        throw Object.assign(new Error(message, { cause: error }), { code });
      }
    }
    sleep(10 + Math.random() * 40);
  }
}

/** Opening is synchronous (stores are built on the handle at boot): the wait between attempts blocks, as busy_timeout does. */
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function prepared(db: SqliteDb, busyTimeoutMs: number): SqliteDb {
  // First: processes opening a new file together wait for each other's locks instead of failing busy.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // No memory map: with several processes on the file, every commit of another made SQLite drop and
  // map it again at the next read, which cost a run of the split layout a fifth more CPU, and its
  // pages (up to 1 GiB a connection) counted in each process's RSS. Vector search no longer reads
  // the file (the search threads hold the vectors), so the map saved only a hit's row reads.
  db.pragma('mmap_size = 0');
  sqliteVec.load(db);
  migrate(db, MIGRATIONS);
  // The group commit reads this to know how long its writes may wait.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return db;
}

/**
 * Applies the migrations the file lacks. Processes sharing the file (the workers of `npm start`,
 * or an api and workers started together) may open a new one at the same moment: the check and
 * the migrations run in one transaction that takes the write lock first (BEGIN IMMEDIATE), so one
 * process migrates and the others, waiting on busy_timeout, then find every version applied.
 */
export function migrate(db: SqliteDb, migrations: Migration[]): void {
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of ordered) {
      if (applied.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
    }
  }).immediate();
}

/** SQLite has no date type: timestamps are ISO 8601 strings, which sort correctly as text. */
export const toSqlDate = (date: Date | null | undefined): string | null => (date ? date.toISOString() : null);
export const fromSqlDate = (value: string | null | undefined): Date | null => (value ? new Date(value) : null);
