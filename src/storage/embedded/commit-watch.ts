import { StoreCommits } from '../../domain/store-commits.port';
import { SqliteDb } from './sqlite-database';

/** How often the watch looks while other processes commit: a pragma read, no query of a table, no lock. */
export const COMMIT_WATCH_MS = 5;
/**
 * How far apart its looks grow while no other process commits (doubling from COMMIT_WATCH_MS): a
 * process alone on its file (one `npm start` with WORKERS=1, whose queue listens all the time) looks
 * 25 times a second rather than 200, and a commit from another process after a quiet spell is seen
 * within this long; from then on, every COMMIT_WATCH_MS again.
 */
export const COMMIT_WATCH_IDLE_MS = 40;

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
 * timer, not one each): while anyone listens it looks whether another process committed (every
 * COMMIT_WATCH_MS while they do, further apart up to COMMIT_WATCH_IDLE_MS while they do not), and
 * calls every listener when one did. It starts with the first listener (reading the version then,
 * so a commit after that is told) and stops with the last.
 */
export class SqliteCommitWatch extends StoreCommits {
  readonly watched = true;
  private readonly version: DataVersion;
  private readonly listeners = new Set<() => void>();
  private timer?: NodeJS.Timeout;
  private interval = COMMIT_WATCH_MS;

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
      this.interval = COMMIT_WATCH_MS;
      this.schedule();
    }
    return () => {
      this.listeners.delete(entry);
      if (this.listeners.size === 0) this.stop();
    };
  }

  private schedule(): void {
    // Unref'd: the waiters' own timers (and the queue's) hold the process, not the watch.
    this.timer = setTimeout(() => this.look(), this.interval).unref();
  }

  private look(): void {
    this.timer = undefined;
    if (!this.db.open) return;
    let changed: boolean;
    try {
      changed = this.version.changed();
    } catch {
      // Closing: the waiters read the store on their own schedule until they time out.
      return;
    }
    this.interval = changed ? COMMIT_WATCH_MS : Math.min(this.interval * 2, COMMIT_WATCH_IDLE_MS);
    if (changed) for (const listener of [...this.listeners]) listener();
    // A listener may have been the last to leave (stop) or come back meanwhile (a new timer).
    if (this.listeners.size > 0 && !this.timer) this.schedule();
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
