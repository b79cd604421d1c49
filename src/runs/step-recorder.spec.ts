import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';
import { succeededStep } from '../../test/utils/steps';
import { LeaseState } from '../domain/run-store.port';
import { Run } from '../domain/run.model';
import { recordedJson } from '../engine/executor/step-records';
import { StepRecorder } from './step-recorder';
import { aQueuedRun } from '../../test/utils/runs';

describe('StepRecorder', () => {
  let dir: string;
  let db: SqliteDb;
  let store: SqliteRunStore;
  let run: Run;
  const leases: LeaseState[] = [];

  const step = succeededStep;
  const recorder = () =>
    new StepRecorder(
      store,
      run.id,
      'w1',
      (lease) => leases.push(lease),
      () => 'sealed',
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-step-recorder-'));
    db = openSqliteDatabase(dir);
    store = new SqliteRunStore(db);
    run = aQueuedRun({ workflowId: 'wfl_r', startedBy: 'u', actingUserId: 'u' });
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

  it('stores a finished node with its sealed outputs before the next node starts, and holds back what a resume derives again', async () => {
    const written = jest.spyOn(store, 'recordSteps');
    const steps = recorder();
    // The trigger (no outputs kept) and a skipped node may wait for the next write.
    steps.add(step('trigger', 0, 'in'));
    steps.add({ ...step('skipped', 1, undefined), status: 'skipped' });
    await steps.settle();
    expect(written).not.toHaveBeenCalled();
    steps.add(step('get', 2, 'out'), { ports: new Map([['main', 'out']]) });
    await steps.settle();
    expect(written).toHaveBeenCalledTimes(1);
    expect(written.mock.calls[0][2].map((s) => [s.nodeId, s.state ?? null])).toEqual([
      ['trigger', null],
      ['skipped', null],
      ['get', 'sealed'],
    ]);
    // Stored: a worker that dies now leaves the node done.
    expect((await store.get(run.id))!.steps.find((s) => s.nodeId === 'get')).toMatchObject({ status: 'succeeded', state: 'sealed' });
    await steps.settle();
    expect(written).toHaveBeenCalledTimes(1);
  });

  it('stores a node whose failure stands before the next node starts', async () => {
    const steps = recorder();
    steps.add({ ...step('post', 1, undefined), status: 'failed', error: { code: 'UPSTREAM', message: 'no' } });
    await steps.settle();
    expect((await store.get(run.id))!.steps.find((s) => s.nodeId === 'post')).toMatchObject({ status: 'failed' });
  });

  it('refuses to let the next node start when the finished one cannot be stored, and keeps it for the next write', async () => {
    const steps = recorder();
    steps.add(step('get', 0, 'out'), { ports: new Map([['main', 'out']]) });
    jest.spyOn(store, 'recordSteps').mockRejectedValueOnce(new Error('disk full'));
    await expect(steps.settle()).rejects.toThrow('disk full');
    expect((await steps.drain(true)).map((s) => [s.nodeId, s.state])).toEqual([['get', 'sealed']]);
  });

  it('waits for a batch on its way and writes again what it failed to store', async () => {
    const written = jest.spyOn(store, 'recordSteps').mockRejectedValueOnce(new Error('busy'));
    const steps = recorder();
    steps.add(step('get', 0, 'out'), { ports: new Map([['main', 'out']]) });
    void steps.flush();
    await steps.settle();
    expect(written).toHaveBeenCalledTimes(2);
    expect((await store.get(run.id))!.steps.map((s) => s.nodeId)).toEqual(['get']);
  });

  it('stores a value as the executor recorded it, with the text its record carries, though modified before the write', async () => {
    const received = { items: ['first'] };
    const steps = recorder();
    const input = recordedJson(received);
    const output = recordedJson({ done: true });
    steps.add({ ...step('set', 0, output.value), input: input.value, json: { input: input.json, output: output.json } });
    // A node that changes what it received, after its record was made and before it is written.
    received.items.push('added by the node');
    await steps.flush();
    expect((await store.get(run.id))!.steps[0]).toMatchObject({ input: { items: ['first'] }, output: { done: true } });
  });

  it('serialises a value the record holds in place of the one its text was made of', async () => {
    const made = recordedJson({ done: true });
    const steps = recorder();
    // A record copied with another output (a waiting step's pending decision) keeps the first one's text beside it.
    steps.add({ ...step('set', 0, made.value), output: { pending: 'approval' }, json: { output: made.json } });
    await steps.flush();
    expect((await store.get(run.id))!.steps[0].output).toEqual({ pending: 'approval' });
  });
});
