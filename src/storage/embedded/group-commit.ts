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
 * of its own: one that throws is undone alone and fails alone; when the batch fails as a whole
 * (SQLite rolled it all back, or its commit failed), each write is tried again in a transaction of
 * its own, so nothing is stored twice or reported failed once stored. Every caller hears back only once
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
          // Some failures make SQLite roll back the whole transaction (disk full, an I/O error,
          // RAISE(ROLLBACK)): the writes before this one are undone too, and the next ones must
          // not run outside it. The batch as a whole has failed.
          if (!db.inTransaction) throw error;
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
    if (writes.length === 1) return this.commitAlone(writes[0]);
    let outcomes: Outcome[];
    try {
      outcomes = this.together.immediate(writes);
    } catch {
      // Nothing of the batch was stored (it was rolled back, or its commit failed): each write
      // is tried again on its own, so each caller hears its own outcome and its own error.
      for (const write of writes) this.commitAlone(write);
      return;
    }
    writes.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  };

  private commitAlone(write: Write): void {
    try {
      write.resolve(this.alone.immediate(write.work));
    } catch (error) {
      write.reject(error);
    }
  }
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
