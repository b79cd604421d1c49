import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../config/app-config';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';
import { aQueuedRun } from '../../test/utils/runs';
import { RunsPruner } from './runs-pruner.service';

describe('RunsPruner', () => {
  let dir: string;
  let db: SqliteDb;
  let runs: SqliteRunStore;
  const day = 24 * 60 * 60 * 1000;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-pruner-'));
    db = openSqliteDatabase(dir);
    runs = new SqliteRunStore(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `count` runs of one workflow that finished `daysAgo` days ago. */
  async function finished(count: number, daysAgo: number, workflowId = 'wfl_p'): Promise<void> {
    for (let i = 0; i < count; i++) {
      const run = aQueuedRun({ workflowId, startedBy: 'u', actingUserId: 'u' }, new Date(Date.now() - daysAgo * day - i));
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w', new Date(Date.now() + 60_000), new Date());
      await runs.complete(run.id, 'w', [], { status: 'succeeded', error: null, finishedAt: new Date(Date.now() - daysAgo * day) });
    }
  }

  const pruner = (env: Record<string, string>) => new RunsPruner(runs, loadConfig({ DATA_DIR: dir, ...env }), pino({ level: 'silent' }));
  const total = async (workflowId = 'wfl_p') => (await runs.list({ workflowId }, { offset: 0, limit: 1 })).total;

  it('deletes finished runs past the retention, in batches until none are left', async () => {
    await finished(1200, 40);
    await finished(3, 1);
    await pruner({ RUNS_RETENTION_DAYS: '30', RUNS_MAX_PER_WORKFLOW: '0' }).reconcile();
    expect(await total()).toBe(3);
  });

  it('keeps the newest runs of each workflow up to the limit', async () => {
    await finished(5, 1, 'wfl_a');
    await finished(2, 1, 'wfl_b');
    await pruner({ RUNS_RETENTION_DAYS: '0', RUNS_MAX_PER_WORKFLOW: '3' }).reconcile();
    expect([await total('wfl_a'), await total('wfl_b')]).toEqual([3, 2]);
  });

  it('deletes nothing when both limits are off', async () => {
    await finished(2, 400);
    await pruner({ RUNS_RETENTION_DAYS: '0', RUNS_MAX_PER_WORKFLOW: '0' }).reconcile();
    expect(await total()).toBe(2);
  });
});
