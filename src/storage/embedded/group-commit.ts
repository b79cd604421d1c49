import type { SqliteDb } from './sqlite-database';

interface Write {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit on one SQLite connection: the writes asked for in the same turn of the event loop
 * run in one transaction, so a burst of runs (accepted, claimed, recorded, finished, their jobs
 * queued and done) pays one WAL commit instead of one per write. Each write runs in a savepoint
 * of its own: one that throws is undone alone and fails alone. Every caller hears back only once
 * the transaction holding its write is committed. The transaction begins IMMEDIATE (the write
 * lock first), which a write that counts rows before it changes them (a concurrency limit across
 * processes sharing the file) needs, and costs nothing to the others, which all write.
 */
export class GroupCommit {
  private pending: Write[] = [];
  private readonly alone;
  private readonly together;

  constructor(db: SqliteDb) {
    this.alone = db.transaction((work: () => unknown) => work());
    // Called inside `together`, `alone` opens a savepoint rather than a transaction.
    this.together = db.transaction((writes: Write[]): Outcome[] =>
      writes.map((write) => {
        try {
          return { ok: true, value: this.alone(write.work) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
  }

  /** Runs `work` (synchronous statements) atomically with the other writes of this turn. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.length === 1) setImmediate(this.flush);
    });
  }

  /** Commits what is waiting now rather than at the end of the turn: before the connection closes. */
  readonly flush = (): void => {
    const writes = this.pending;
    if (writes.length === 0) return;
    this.pending = [];
    if (writes.length === 1) {
      const [write] = writes;
      try {
        write.resolve(this.alone.immediate(write.work));
      } catch (error) {
        write.reject(error);
      }
      return;
    }
    let outcomes: Outcome[];
    try {
      outcomes = this.together.immediate(writes);
    } catch (error) {
      // The commit itself failed (the disk, a lock held past busy_timeout): nothing was stored.
      for (const write of writes) write.reject(error);
      return;
    }
    writes.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  };
}

const byConnection = new WeakMap<SqliteDb, GroupCommit>();

/** The one group commit of a connection, shared by every store writing through it. */
export function groupCommitOf(db: SqliteDb): GroupCommit {
  let group = byConnection.get(db);
  if (!group) {
    group = new GroupCommit(db);
    byConnection.set(db, group);
  }
  return group;
}
