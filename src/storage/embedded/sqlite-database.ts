import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import { MIGRATIONS } from './migrations';
import type { Migration } from './migrations/migration';

export type SqliteDb = Database.Database;
export type SqliteStatement = Database.Statement;

/**
 * Opens the one SQLite file of the embedded deployment: WAL so readers never wait for the writer,
 * sqlite-vec loaded for the vector index, and versioned migrations applied in order.
 */
export function openSqliteDatabase(dataDir: string, fileName = 'service.db'): SqliteDb {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(fileName === ':memory:' ? ':memory:' : join(dataDir, fileName));
  try {
    return prepared(db);
  } catch (error) {
    // Not a database, or its write lock held past busy_timeout: the handle goes with the failure.
    db.close();
    throw error;
  }
}

function prepared(db: SqliteDb): SqliteDb {
  // First: processes opening a new file together wait for each other's locks instead of failing busy.
  db.pragma('busy_timeout = 5000');
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
