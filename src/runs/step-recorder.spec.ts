import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';
import { succeededStep } from '../../test/utils/steps';
import { LeaseState } from '../storage/run-store.port';
import { newQueuedRun, Run } from './run.model';
import { StepRecorder } from './step-recorder';

describe('StepRecorder', () => {
  let dir: string;
  let db: SqliteDb;
  let store: SqliteRunStore;
  let run: Run;
  const leases: LeaseState[] = [];

  const step = succeededStep;
  const recorder = () => new StepRecorder(store, run.id, 'w1', (lease) => leases.push(lease), () => 'sealed');

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-step-recorder-'));
    db = openSqliteDatabase(dir);
    store = new SqliteRunStore(db);
    run = newQueuedRun({ workflowId: 'wfl_r', runType: 'test', versionId: null, version: null, definition: null, input: null, trigger: 'webhook', startedBy: 'u', actingUserId: 'u', idempotencyKey: null });
    await store.create(run, new Date(0));
    await store.claim(run.id, 'w1', new Date(Date.now() + 60_000), new Date());
    leases.length = 0;
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes only the latest buffered record of each node', async () => {
    const written = jest.spyOn(store, 'recordSteps');
    const steps = recorder();
    steps.add(step('a', 0, 1));
    steps.add(step('b', 1, 'b'));
    steps.add(step('a', 0, 2));
    await steps.flush();
    expect(written).toHaveBeenCalledTimes(1);
    expect(written.mock.calls[0][2].map((s) => [s.nodeId, s.output])).toEqual([
      ['a', 2],
      ['b', 'b'],
    ]);
    expect(leases).toEqual([{ held: true, cancelRequested: false }]);
  });

  it('keeps the buffered steps when writing a started node fails, for the next write', async () => {
    const steps = recorder();
    steps.add(step('a', 0, 'a'));
    steps.add(step('b', 1, 'b'));
    jest.spyOn(store, 'recordSteps').mockRejectedValueOnce(new Error('disk full'));
    await expect(steps.write({ ...step('c', 2, undefined), status: 'running', finishedAt: null })).rejects.toThrow('disk full');
    expect((await steps.drain(false)).map((s) => s.nodeId)).toEqual(['a', 'b']);
  });
});
