import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupCommit, groupCommitOf } from './group-commit';
import { SqliteDb } from './sqlite-database';

describe('GroupCommit', () => {
  let dir: string;
  let db: SqliteDb;
  /** Another connection to the same file: it sees only what was committed. */
  let reader: SqliteDb;
  let group: GroupCommit;
  /** The SQL the writing connection ran, transaction control among it (better-sqlite3's `verbose`). */
  let statements: string[];
  const committed = () => reader.prepare('SELECT v FROM t ORDER BY v').pluck().all();
  const insert = (v: number) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'group-commit-'));
    statements = [];
    db = new Database(join(dir, 'db.sqlite'), { verbose: (sql) => statements.push(String(sql)) });
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v INTEGER PRIMARY KEY)');
    reader = new Database(join(dir, 'db.sqlite'), { readonly: true });
    group = new GroupCommit(db);
  });
  afterEach(() => {
    reader.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes asked for in one turn share one transaction, each answered with its own result', async () => {
    const seenByOthers: unknown[][] = [];
    const results = await Promise.all(
      [1, 2, 3].map((v) =>
        group.run(() => {
          // Had the earlier writes of the batch been committed on their own, the reader would see them.
          seenByOthers.push(committed());
          return insert(v)() + v * 10;
        }),
      ),
    );
    expect(results).toEqual([11, 21, 31]);
    expect(seenByOthers).toEqual([[], [], []]);
    expect(committed()).toEqual([1, 2, 3]);
  });

  it('runs the writes of a batch once each, with no savepoint between them, when none throws', async () => {
    const runs = [0, 0, 0];
    const results = await Promise.all([1, 2, 3].map((v, i) => group.run(() => (runs[i]++, insert(v)()))));
    expect(results).toEqual([1, 1, 1]);
    expect(runs).toEqual([1, 1, 1]);
    expect(statements.filter((sql) => /^(BEGIN|SAVEPOINT|RELEASE|ROLLBACK|COMMIT)/.test(sql))).toEqual(['BEGIN IMMEDIATE', 'COMMIT']);
    expect(committed()).toEqual([1, 2, 3]);
  });

  it('when a write throws, rolls the batch back and runs it again with a savepoint per write: stored once, each caller hears its last run', async () => {
    const runs = [0, 0, 0];
    const outcomes = await Promise.allSettled([
      group.run(() => (insert(1)(), ++runs[0])),
      group.run(() => {
        runs[1]++;
        insert(2)();
        throw new Error('half-way');
      }),
      group.run(() => (insert(3)(), ++runs[2])),
    ]);
    // The first pass stopped at the throw, before the third write; the second ran all three.
    expect(runs).toEqual([2, 2, 1]);
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 2 },
      { status: 'rejected', reason: new Error('half-way') },
      { status: 'fulfilled', value: 1 },
    ]);
    const control = statements.filter((sql) => /^(BEGIN|ROLLBACK$|COMMIT)/.test(sql));
    expect(control).toEqual(['BEGIN IMMEDIATE', 'ROLLBACK', 'BEGIN IMMEDIATE', 'COMMIT']);
    expect(statements.filter((sql) => sql.startsWith('SAVEPOINT'))).toHaveLength(3);
    expect(committed()).toEqual([1, 3]);
  });

  it('while another connection holds the write lock, waits for it without blocking the event loop, then commits', async () => {
    const other = new Database(join(dir, 'db.sqlite'));
    try {
      other.exec('BEGIN IMMEDIATE');
      other.exec('INSERT INTO t (v) VALUES (100)');
      let settled = false;
      const first = group.run(insert(1));
      void first.then(() => (settled = true));
      // Timers keep firing while the lock is held elsewhere (SQLite's own busy wait would sleep the process).
      const turned = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 30));
      const second = group.run(insert(2));
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(performance.now() - turned).toBeLessThan(3000);
      expect(settled).toBe(false);
      expect(committed()).toEqual([]);
      other.exec('COMMIT');
      await expect(Promise.all([first, second])).resolves.toEqual([1, 1]);
      expect(committed()).toEqual([1, 2, 100]);
    } finally {
      other.close();
    }
  });

  it('answers only once its write is committed', async () => {
    const pending = group.run(insert(1));
    expect(committed()).toEqual([]);
    await pending;
    expect(committed()).toEqual([1]);
  });

  it('a write that throws is undone and fails alone; the others of its batch are stored', async () => {
    const outcomes = await Promise.allSettled([
      group.run(insert(1)),
      group.run(() => {
        insert(2)();
        throw new Error('half-way');
      }),
      group.run(insert(3)),
      group.run(insert(1)), // the same key again: a constraint violation
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('half-way');
    expect((outcomes[3] as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(committed()).toEqual([1, 3]);
  });

  it('a write that makes SQLite roll back the whole batch fails alone: the others are stored once, each hears its own outcome', async () => {
    db.exec(`CREATE TRIGGER abort_on_13 BEFORE INSERT ON t WHEN NEW.v = 13 BEGIN SELECT RAISE(ROLLBACK, 'thirteen'); END`);
    const outcomes = await Promise.allSettled([
      group.run(insert(11)),
      group.run(insert(12)),
      group.run(insert(13)),
      group.run(insert(14)),
      group.run(insert(15)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason.message).toBe('thirteen');
    expect(committed()).toEqual([11, 12, 14, 15]);
  });

  it('a write alone in its turn is undone whole when it throws', async () => {
    await expect(
      group.run(() => {
        insert(5)();
        insert(6)();
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await expect(group.run(insert(7))).resolves.toBe(1);
    expect(committed()).toEqual([7]);
  });

  it("runs a write's parts with no savepoint; one that throws runs the batch again, the part undone alone and the write going on", async () => {
    /** A write of v, with a part writing v + 100 that throws (after its insert) when `refuse`. */
    const withPart = (v: number, refuse: boolean) => () => {
      insert(v)();
      const part = group.part(() => {
        insert(v + 100)();
        if (refuse) throw new Error(`part ${v}`);
        return v;
      });
      return part.ok ? part.value : (part.error as Error).message;
    };
    // All parts succeed: one pass, no savepoint.
    await expect(Promise.all([group.run(withPart(1, false)), group.run(withPart(2, false))])).resolves.toEqual([1, 2]);
    expect(statements.filter((sql) => /^(SAVEPOINT|RELEASE|ROLLBACK)/.test(sql))).toEqual([]);

    statements.length = 0;
    await expect(Promise.all([group.run(withPart(3, false)), group.run(withPart(4, true))])).resolves.toEqual([3, 'part 4']);
    expect(statements.filter((sql) => /^(BEGIN|ROLLBACK$|COMMIT)/.test(sql))).toEqual([
      'BEGIN IMMEDIATE',
      'ROLLBACK',
      'BEGIN IMMEDIATE',
      'COMMIT',
    ]);
    // A write alone in its turn: the same, its part undone alone.
    await expect(group.run(withPart(5, true))).resolves.toBe('part 5');
    expect(committed()).toEqual([1, 2, 3, 4, 5, 101, 102, 103]);
  });

  it('runs the batch again with savepoints when a part threw, even if its write caught the error', async () => {
    const swallowing = (v: number) => () => {
      insert(v)();
      try {
        group.part(() => {
          insert(v + 100)();
          throw new Error('caught by the write');
        });
      } catch {
        // The write goes on without the part: what the part did must not be stored.
      }
      return v;
    };
    await expect(Promise.all([group.run(swallowing(1)), group.run(insert(2))])).resolves.toEqual([1, 1]);
    await expect(group.run(swallowing(3))).resolves.toBe(3);
    expect(committed()).toEqual([1, 2, 3]);
  });

  it('flush commits what waits at once, and the end of the turn then finds nothing left', async () => {
    const pending = group.run(insert(4));
    group.flush();
    expect(committed()).toEqual([4]);
    await expect(pending).resolves.toBe(1);
  });

  it("keeps the savepoints' journal of a batch of few-row writes in memory, of any other batch on disk, and leaves the connection's setting as it was", async () => {
    const tempStore = () => db.pragma('temp_store', { simple: true }) as number;
    const seen = (v: number, few: boolean) =>
      group.run(() => {
        insert(v)();
        return tempStore();
      }, few);
    const failing = (few: boolean) =>
      group
        .run(() => {
          throw new Error('undone alone');
        }, few)
        .catch((error: Error) => error.message);
    // SQLite's temp_store: 2 MEMORY, 0 the default (a file past 64 KiB, with this build). A batch
    // runs with savepoints (so with their journal) only once one of its writes threw.
    expect(await Promise.all([seen(1, true), seen(2, true)])).toEqual([0, 0]);
    expect(await Promise.all([seen(3, true), failing(true)])).toEqual([2, 'undone alone']);
    expect(tempStore()).toBe(0);
    expect(await Promise.all([seen(4, true), seen(5, false), failing(true)])).toEqual([0, 0, 'undone alone']);
    expect(tempStore()).toBe(0);
    expect(committed()).toEqual([1, 2, 3, 4, 5]);
  });

  it('is one per connection, shared by every store writing through it', () => {
    expect(groupCommitOf(db)).toBe(groupCommitOf(db));
    expect(groupCommitOf(reader)).not.toBe(groupCommitOf(db));
  });
});
