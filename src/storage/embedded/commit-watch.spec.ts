import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMIT_WATCH_IDLE_MS, COMMIT_WATCH_MS, SqliteCommitWatch } from './commit-watch';
import { openSqliteDatabase, SqliteDb } from './sqlite-database';

/** Two connections to one file stand for two processes that no channel links (the split layout without Redis). */
describe('SqliteCommitWatch', () => {
  let dir: string;
  let here: SqliteDb;
  let elsewhere: SqliteDb;
  let watch: SqliteCommitWatch;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-commit-watch-'));
    here = openSqliteDatabase(dir);
    elsewhere = openSqliteDatabase(dir);
    here.exec('CREATE TABLE IF NOT EXISTS t (n INTEGER)');
    watch = new SqliteCommitWatch(here);
  });

  afterEach(() => {
    here.close();
    elsewhere.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Resolves at the first call of a listener subscribed now, which it unsubscribes. */
  const nextCall = () =>
    new Promise<void>((resolve) => {
      const stop = watch.onCommitElsewhere(() => {
        stop();
        resolve();
      });
    });

  it("calls its listeners when another connection commits, not for this connection's own commits", async () => {
    let calls = 0;
    const stop = watch.onCommitElsewhere(() => calls++);
    here.prepare('INSERT INTO t VALUES (1)').run();
    // Time for many looks (every 5 ms): had its own commit been told, it would have been by now.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toBe(0);

    const told = nextCall();
    elsewhere.prepare('INSERT INTO t VALUES (2)').run();
    await told;
    expect(calls).toBeGreaterThan(0);
    stop();
  });

  it('tells a commit made right after the first listener subscribed', async () => {
    const told = nextCall();
    elsewhere.prepare('INSERT INTO t VALUES (3)').run();
    await told;
  });

  it('stops looking with its last listener, and starts again with the next', async () => {
    const first = watch.onCommitElsewhere(() => undefined);
    first();
    const look = jest.spyOn(watch as unknown as { look(): void }, 'look');
    elsewhere.prepare('INSERT INTO t VALUES (4)').run();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(look).not.toHaveBeenCalled();

    const told = nextCall();
    elsewhere.prepare('INSERT INTO t VALUES (5)').run();
    await told;
  });
  it('looks further apart while no other process commits, and every few ms again once one does', () => {
    jest.useFakeTimers();
    try {
      const look = jest.spyOn(watch as unknown as { look(): void }, 'look');
      let calls = 0;
      const stop = watch.onCommitElsewhere(() => calls++);
      // A second of the watch's clock with nobody else on the file: at one look every COMMIT_WATCH_MS it would be 200.
      jest.advanceTimersByTime(1000);
      expect(look.mock.calls.length).toBeLessThanOrEqual(1000 / COMMIT_WATCH_IDLE_MS + 4);

      elsewhere.prepare('INSERT INTO t VALUES (6)').run();
      for (let step = 0; calls === 0 && step < 10; step++) jest.advanceTimersToNextTimer();
      expect(calls).toBe(1);
      // Told of one, it looks again COMMIT_WATCH_MS after the look that saw it.
      elsewhere.prepare('INSERT INTO t VALUES (7)').run();
      jest.advanceTimersByTime(COMMIT_WATCH_MS);
      expect(calls).toBe(2);
      stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
