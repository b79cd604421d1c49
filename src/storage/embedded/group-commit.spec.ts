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
  const committed = () => reader.prepare('SELECT v FROM t ORDER BY v').pluck().all();
  const insert = (v: number) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'group-commit-'));
    db = new Database(join(dir, 'db.sqlite'));
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
    // SQLite's temp_store: 2 MEMORY, 0 the default (a file past 64 KiB, with this build).
    expect(await Promise.all([seen(1, true), seen(2, true)])).toEqual([2, 2]);
    expect(tempStore()).toBe(0);
    expect(await Promise.all([seen(3, true), seen(4, false)])).toEqual([0, 0]);
    const failing = group.run(() => {
      throw new Error('undone alone');
    }, true);
    expect(await Promise.all([seen(5, true), failing.catch((error: Error) => error.message)])).toEqual([2, 'undone alone']);
    expect(tempStore()).toBe(0);
    expect(committed()).toEqual([1, 2, 3, 4, 5]);
  });

  it('is one per connection, shared by every store writing through it', () => {
    expect(groupCommitOf(db)).toBe(groupCommitOf(db));
    expect(groupCommitOf(reader)).not.toBe(groupCommitOf(db));
  });
});
