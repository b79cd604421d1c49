import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteDatabase, SqliteDb } from '../../src/storage/embedded/sqlite-database';
import { MongoConnection as Connection, openMongoConnection } from '../../src/storage/mongo/mongo-connection';

/**
 * The document-store backends a contract suite runs against: SQLite always, MongoDB when
 * MONGODB_URI is set (each suite gets its own database, dropped afterwards).
 */
export interface StoreBackend {
  name: string;
  open(): Promise<{ sqlite?: SqliteDb; mongo?: Connection; close(): Promise<void> }>;
}

const sqliteBackend: StoreBackend = {
  name: 'sqlite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'wcs-contract-'));
    const sqlite = openSqliteDatabase(dir);
    return {
      sqlite,
      async close() {
        sqlite.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const mongoBackend: StoreBackend = {
  name: 'mongodb',
  async open() {
    const uri = new URL(process.env.MONGODB_URI!);
    uri.pathname = `/wcs_contract_${process.pid}_${Date.now()}`;
    const mongo = await openMongoConnection(uri.toString()).asPromise();
    await mongo.syncIndexes();
    return {
      mongo,
      async close() {
        await mongo.dropDatabase();
        await mongo.close();
      },
    };
  },
};

export const storeBackends: StoreBackend[] = process.env.MONGODB_URI ? [sqliteBackend, mongoBackend] : [sqliteBackend];

/** Picks the adapter for the opened backend. */
export function pick<T>(
  handles: { sqlite?: SqliteDb; mongo?: Connection },
  sqlite: (db: SqliteDb) => NoInfer<T>,
  mongo: (c: Connection) => NoInfer<T>,
): T {
  return handles.sqlite ? sqlite(handles.sqlite) : mongo(handles.mongo!);
}
