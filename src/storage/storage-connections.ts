import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { CHECKPOINT_BACKSTOP_PAGES, CheckpointThread, checkpointThreadOf } from './embedded/checkpoint-thread';
import { groupCommitOf } from './embedded/group-commit';
import { openSqliteDatabase, SqliteDb } from './embedded/sqlite-database';
import type { MongoConnection } from './mongo/mongo-connection';

/** The MongoDB driver (mongoose), loaded only by a process configured with MONGODB_URI. */
const mongoDriver = () => import('./mongo/mongo-connection');

/**
 * The database handles, opened on first use so a deployment only touches the engines its
 * configuration picks (a MongoDB deployment still uses SQLite if it keeps the embedded vector index).
 */
@Injectable()
export class StorageConnections implements OnApplicationShutdown {
  private sqliteDb?: SqliteDb;
  private sqliteFailure?: { error: unknown };
  private checkpoints?: CheckpointThread;
  private mongoConnection?: MongoConnection;
  private connectedMongo?: Promise<MongoConnection>;

  constructor(private readonly config: AppConfig) {}

  get usesMongo(): boolean {
    return Boolean(this.config.MONGODB_URI);
  }

  get sqlite(): SqliteDb {
    // Each store asks in turn at boot: a store that could not be opened (its locks held past the
    // open's wait, a file that is no database) fails them all at once, not each after a wait of its own.
    if (this.sqliteFailure) throw this.sqliteFailure.error;
    if (!this.sqliteDb) {
      try {
        this.sqliteDb = openSqliteDatabase(this.config.dataDir);
      } catch (error) {
        this.sqliteFailure = { error };
        throw error;
      }
      if (this.leavesCheckpointsToWorkers) this.sqliteDb.pragma(`wal_autocheckpoint = ${CHECKPOINT_BACKSTOP_PAGES}`);
      else this.checkpoints = checkpointThreadOf(this.sqliteDb);
    }
    return this.sqliteDb;
  }

  /**
   * A process that serves the API beside worker processes (or that only serves it) leaves WAL
   * checkpoints to the processes that write most. SQLite checkpoints in the commit that finds the
   * WAL past the threshold, whoever made it: while a worker ingested, the API process's commits (an
   * upload's record) copied the worker's vectors into the file and synced it, up to 340 ms of its
   * event loop at once. Its own threshold stays as a backstop, so the WAL is bounded even when no
   * worker writes. A process that writes the store itself checkpoints in a thread of its own
   * (CheckpointThread), its event loop's threshold raised to the same backstop: SQLite's automatic
   * checkpoints in the run path's commits were about two fifths of those commits' own time.
   */
  private get leavesCheckpointsToWorkers(): boolean {
    return this.config.supervisedWorkers > 0 || this.config.APP_ROLE === 'api';
  }

  /**
   * The MongoDB connection once the server answered (stores are built on it at boot). mongoose and
   * its driver are loaded here, on first use: imported with this module, they cost every process of
   * the embedded default heap it never used (mongoose alone: about 10 MiB of heap, 31 MiB resident).
   */
  mongoReady(): Promise<MongoConnection> {
    const uri = this.config.MONGODB_URI;
    if (!uri) return Promise.reject(new Error('MONGODB_URI is not set'));
    this.connectedMongo ??= mongoDriver().then(({ openMongoConnection, connectMongo }) => {
      this.mongoConnection = openMongoConnection(uri);
      return connectMongo(this.mongoConnection, uri);
    });
    return this.connectedMongo;
  }

  /** Readiness: the document store answers. */
  async ping(): Promise<void> {
    if (this.usesMongo) {
      const { pingMongo } = await mongoDriver();
      await pingMongo(await this.mongoReady());
    } else {
      this.sqlite.prepare('SELECT 1').get();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.mongoConnection?.close();
    await this.checkpoints?.close();
    if (this.sqliteDb?.open) {
      // Writes asked for in this last turn are committed, not dropped with the connection.
      groupCommitOf(this.sqliteDb).flush();
      this.sqliteDb.close();
    }
  }
}

type StoreClass<T> = abstract new (...args: never[]) => T;

/**
 * A provider for a store port that builds the SQLite or the MongoDB adapter, whichever the
 * configuration picks. Domain modules register their own stores with it; a MongoDB adapter is
 * imported inside `mongo` (`(c) => import(...)`), so the embedded default never loads mongoose.
 */
export function storeProvider<T>(port: StoreClass<T>, sqlite: (db: SqliteDb) => T, mongo: (connection: MongoConnection) => T | Promise<T>) {
  return {
    provide: port,
    inject: [StorageConnections],
    useFactory: async (connections: StorageConnections): Promise<T> =>
      connections.usesMongo ? mongo(await connections.mongoReady()) : sqlite(connections.sqlite),
  };
}
