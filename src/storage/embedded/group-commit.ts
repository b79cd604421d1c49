import type { SqliteDb } from './sqlite-database';

interface Write {
  work: () => unknown;
  /** Changes a few rows (a run's, a job's), so its savepoint's journal is small: see GroupCommit.run. */
  few: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome<T = unknown> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * How long a batch keeps asking again from the event loop for a write lock another process holds,
 * before it waits inside SQLite (busy_timeout, which sleeps the whole process) as a single write does.
 */
const LOCK_RETRY_MS = 2000;
/** Tries made at once (setImmediate) before the next ones wait a timer's millisecond. */
const IMMEDIATE_TRIES = 2;

/**
 * Where a batch of writes that each change a few rows keeps its savepoints' journal: in memory.
 * Set before the transaction begins (SQLite decides at BEGIN), back to the default after it.
 */
const JOURNAL_IN_MEMORY = 'PRAGMA temp_store = MEMORY';
const TEMP_STORE_DEFAULT = 'PRAGMA temp_store = DEFAULT';

/** SQLite's answer when the write lock is held elsewhere and the connection does not wait for it. */
const isBusy = (error: unknown): boolean => (error as { code?: string } | null)?.code === 'SQLITE_BUSY';

/**
 * Group commit on one SQLite connection: the writes asked for in the same turn of the event loop
 * run in one transaction, so a burst of runs (accepted, claimed, recorded, finished, their jobs
 * queued and done) pays one WAL commit instead of one per write. The batch first runs its writes
 * one after the other, with nothing between them (a savepoint per write and its release were a
 * third of a run's statements); when one throws (rare: a constraint, a mismatch), the whole
 * transaction is rolled back and the batch runs again with each write in a savepoint of its own,
 * so one that throws is undone alone and fails alone. A write's parts that may fail without it
 * (`part`) are treated the same way, one level down. When that batch fails as a whole (SQLite
 * rolled it all back, or its commit failed), each write is tried again in a transaction of its own.
 * So a write may run more than once, and only its last run counts: it must act only through this
 * connection and leave memory as a run that is undone would find it (what it keeps, it keeps
 * from its last run or once its promise settles). Nothing is stored twice or reported failed once
 * stored. Every caller hears back only once
 * the transaction holding its write is committed. The transaction begins IMMEDIATE (the write
 * lock first), which a write that counts rows before it changes them (a concurrency limit across
 * processes sharing the file) needs, and costs nothing to the others, which all write.
 *
 * Processes sharing the file (`npm start`'s workers, an api and its workers) take the write lock
 * in turn. SQLite's own wait for it (busy_timeout) sleeps the process, 1, 2, 5, 10 ms and on,
 * event loop and all: with two processes running runs, a run's batches met a held lock about once
 * in two runs. So a batch first asks for the lock without waiting; when another process holds it,
 * the batch is asked again from the event loop (at once, then every millisecond), the writes of
 * the meantime joining it, and only after LOCK_RETRY_MS does it wait inside SQLite.
 */
export class GroupCommit {
  private pending: Write[] = [];
  private readonly alone;
  /** The writes of a batch with no savepoint between them: all stored, or none when one throws. */
  private readonly optimistic;
  /** The writes of a batch each in a savepoint of its own: one that throws is undone alone. */
  private readonly together;
  /** Set as the transaction's first step: a failure without it was the BEGIN's (the lock). */
  private began = false;
  /** While a batch runs with no savepoints (its first pass): a part that throws fails the pass (see `part`). */
  private optimisticPass = false;
  /** A part threw in the first pass: a batch of one write runs again with savepoints too. */
  private partThrew = false;
  /** A part in a savepoint of its own (a better-sqlite3 transaction inside a transaction). */
  private readonly nested;
  /** SQL setting the connection's busy_timeout to 0 and back (a prepared PRAGMA acts when prepared, not when run). */
  private readonly noWait = 'PRAGMA busy_timeout = 0';
  private readonly wait: string;
  /** When the pending batch first found the lock held, and how often since; undefined while none did. */
  private busy: { since: number; tries: number } | undefined;

  constructor(private readonly db: SqliteDb) {
    const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
    this.wait = `PRAGMA busy_timeout = ${Math.max(0, Math.trunc(busyTimeout))}`;
    this.nested = db.transaction((work: () => unknown) => work());
    this.alone = db.transaction((work: () => unknown) => {
      this.began = true;
      return work();
    });
    this.optimistic = db.transaction((writes: Write[]): Outcome[] => {
      this.began = true;
      return this.noPartThrew(writes.map((write) => ({ ok: true, value: write.work() })));
    });
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

  /**
   * Runs `work` (synchronous statements) atomically with the other writes of this turn; it may be
   * run again (see the class's comment). `few`: it changes a few rows (a run's, a job's). When a
   * batch runs with a savepoint per write, each savepoint copies the pages it changes into a
   * journal, which SQLite moves to a temporary file past 64 KiB, opened, written and deleted again
   * in every such transaction: for a batch of such writes alone, the journal stays in memory (its
   * size is the pages the batch changes), while a write that may change many pages (a file's
   * passages) keeps it on disk.
   */
  run<T>(work: () => T, few = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, few, resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.length === 1 && this.busy === undefined) setImmediate(this.flushWithoutWaiting);
    });
  }

  /**
   * A part of a write that may fail while the write goes on without it (a run's claim inside its
   * job's claim). In a batch's first pass it runs with nothing around it, and if it throws, the
   * pass fails and the batch runs again with savepoints (two statements fewer a part while none
   * throws); there, it runs in a savepoint of its own, undone alone when it throws, and the write
   * hears its error. A failure that rolled back the whole transaction fails the write.
   */
  part<T>(work: () => T): Outcome<T> {
    if (this.optimisticPass) {
      try {
        return { ok: true, value: work() };
      } catch (error) {
        this.partThrew = true;
        throw error;
      }
    }
    try {
      return { ok: true, value: this.nested(work) as T };
    } catch (error) {
      if (!this.db.inTransaction) throw error;
      return { ok: false, error };
    }
  }

  /** A part that threw fails the first pass even when its write caught the error: what the part did is not undone there. */
  private noPartThrew<T>(value: T): T {
    if (this.partThrew) throw new Error('a part of a write threw: the batch runs again with savepoints');
    return value;
  }

  /** Runs a pass of the batch with no savepoints for its parts (see `part`). */
  private firstPass<T>(pass: () => T): T {
    this.optimisticPass = true;
    this.partThrew = false;
    try {
      return pass();
    } finally {
      this.optimisticPass = false;
    }
  }

  /**
   * The end of a turn: commits what is waiting if the write lock is free now; if another process
   * holds it, asks again soon (see the class's comment) rather than sleeping the process.
   */
  private readonly flushWithoutWaiting = (): void => {
    if (this.pending.length === 0) return void (this.busy = undefined);
    // A connection closed meanwhile fails each write with SQLite's own error, as a blocking flush does.
    if (!this.db.open || (this.busy !== undefined && performance.now() - this.busy.since > LOCK_RETRY_MS)) return this.flush();
    this.db.exec(this.noWait);
    let lockHeld = false;
    try {
      lockHeld = !this.commit(true);
    } finally {
      this.db.exec(this.wait);
    }
    if (!lockHeld) return void (this.busy = undefined);
    this.busy ??= { since: performance.now(), tries: 0 };
    if (++this.busy.tries <= IMMEDIATE_TRIES) setImmediate(this.flushWithoutWaiting);
    else setTimeout(this.flushWithoutWaiting, 1);
  };

  /** Commits what is waiting now, waiting for the write lock if need be: before the connection closes. */
  readonly flush = (): void => {
    this.busy = undefined;
    this.commit(false);
  };

  /**
   * Commits the pending writes and answers their callers. With `lockOrNothing`, a write lock held
   * by another process (the BEGIN failing busy) leaves them pending and returns false.
   */
  private commit(lockOrNothing: boolean): boolean {
    const writes = this.pending;
    if (writes.length === 0) return true;
    this.pending = [];
    this.began = false;
    let outcomes: Outcome[];
    let inMemory = false;
    try {
      if (writes.length === 1) {
        const { work } = writes[0];
        try {
          outcomes = [{ ok: true, value: this.firstPass(() => this.alone.immediate(() => this.noPartThrew(work()))) }];
        } catch (error) {
          // A part threw (the write was rolled back): again, with its parts in savepoints.
          if (!this.began || !this.partThrew) throw error;
          this.began = false;
          outcomes = [{ ok: true, value: this.alone.immediate(work) }];
        }
      } else {
        try {
          outcomes = this.firstPass(() => this.optimistic.immediate(writes));
        } catch (error) {
          if (!this.began) throw error;
          // A write threw (or the commit failed): nothing of the batch was stored. Again, a savepoint per write.
          this.began = false;
          inMemory = this.db.open && !this.db.inTransaction && writes.every((write) => write.few);
          if (inMemory) this.db.exec(JOURNAL_IN_MEMORY);
          outcomes = this.together.immediate(writes);
        }
      }
    } catch (error) {
      if (lockOrNothing && !this.began && isBusy(error)) {
        this.pending = writes.concat(this.pending);
        return false;
      }
      if (writes.length === 1) outcomes = [{ ok: false, error }];
      else {
        // Nothing of the batch was stored (it was rolled back, or its commit failed): each write
        // is tried again on its own, so each caller hears its own outcome and its own error.
        for (const write of writes) this.commitAlone(write);
        return true;
      }
    } finally {
      if (inMemory && this.db.open) this.db.exec(TEMP_STORE_DEFAULT);
    }
    writes.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
    return true;
  }

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
