import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCommitWatch } from './commit-watch';
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
});
