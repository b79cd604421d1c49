import { StoreCommits } from '../../domain/store-commits.port';
import { SqliteDb } from './sqlite-database';

/** How often the watch looks while someone listens: a pragma read, no query of a table, no lock. */
export const COMMIT_WATCH_MS = 5;

/**
 * Whether another connection (another process on the file) committed since the last look, read
 * from SQLite's `data_version`, which changes for other connections' commits only, not for this one's.
 */
export class DataVersion {
  private readonly statement;
  private version?: number;

  constructor(db: SqliteDb) {
    this.statement = db.prepare('PRAGMA data_version').pluck();
  }

  /** True when another connection committed since the last call (false on the first). */
  changed(): boolean {
    const version = this.statement.get() as number;
    const changed = this.version !== undefined && version !== this.version;
    this.version = version;
    return changed;
  }
}

/**
 * The process's one watch of the SQLite file, for its waiters and its queue's idle workers (one
 * timer, not one each): while anyone listens it looks every
 * COMMIT_WATCH_MS whether another process committed, and calls every listener when one did. It
 * starts with the first listener (reading the version then, so a commit after that is told) and
 * stops with the last.
 */
export class SqliteCommitWatch extends StoreCommits {
  readonly watched = true;
  private readonly version: DataVersion;
  private readonly listeners = new Set<() => void>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly db: SqliteDb) {
    super();
    this.version = new DataVersion(db);
  }

  onCommitElsewhere(listener: () => void): () => void {
    // Its own entry, so one listener added twice is called and removed once per subscription.
    const entry = () => listener();
    this.listeners.add(entry);
    if (!this.timer && this.db.open) {
      this.version.changed();
      // Unref'd: the waiters' own timers (and the queue's) hold the process, not the watch.
      this.timer = setInterval(() => this.look(), COMMIT_WATCH_MS).unref();
    }
    return () => {
      this.listeners.delete(entry);
      if (this.listeners.size === 0) this.stop();
    };
  }

  private look(): void {
    if (!this.db.open) return this.stop();
    try {
      if (!this.version.changed()) return;
    } catch {
      // Closing: the waiters read the store on their own schedule until they time out.
      return this.stop();
    }
    for (const listener of [...this.listeners]) listener();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
