import { SqliteJobStore } from '../../src/jobs/embedded/sqlite-job-store.adapter';
import { SqliteRunStore } from '../../src/storage/embedded/sqlite-run-store.adapter';
import { StorageConnections } from '../../src/storage/storage-connections';
import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

const SET_AFTER_WEBHOOK = {
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    { id: 'shape', type: 'set', parameters: { fields: { done: 'yes' } } },
  ],
  edges: [{ from: 'trigger', to: 'shape' }],
};

/**
 * On the embedded default (SQLite, in-process queue), a caller's run and its job are inserted in
 * one write of the group commit: one commit where there were two, and never a run stored without
 * its job, even for an instant.
 */
describe('a run accepted with its job (SQLite)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => jest.restoreAllMocks());

  const publish = async () => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'accept', definition: SET_AFTER_WEBHOOK } });
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };

  it("stores a run and its job in the run's own write, and the run runs", async () => {
    const workflowId = await publish();
    const runWrites = jest.spyOn(SqliteRunStore.prototype, 'create');
    const jobWrites = jest.spyOn(SqliteJobStore.prototype, 'insert');

    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input: {} } });
    expect(started.status).toBe(202);
    expect(await waitForRun(t.request, started.body.runId)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(runWrites).not.toHaveBeenCalled();
    expect(jobWrites).not.toHaveBeenCalled();

    // The same Idempotency-Key names the same run, and stores no second job.
    const again = () =>
      t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input: {} }, headers: { 'idempotency-key': 'once' } });
    const first = await again();
    const second = await again();
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(second.body.runId).toBe(first.body.runId);
    expect(await waitForRun(t.request, first.body.runId)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('answers 503 when its job cannot be stored, and no run was ever stored', async () => {
    const workflowId = await publish();
    const db = t.app.get(StorageConnections).sqlite;
    // Every run ever committed is kept here, also one withdrawn later; the queue refuses this workflow's jobs.
    db.exec(`CREATE TABLE IF NOT EXISTS runs_seen (id TEXT);
      CREATE TRIGGER IF NOT EXISTS runs_seen AFTER INSERT ON workflow_runs BEGIN INSERT INTO runs_seen VALUES (NEW.id); END;
      CREATE TRIGGER IF NOT EXISTS jobs_refused BEFORE INSERT ON jobs WHEN NEW.share_flow = '${workflowId}'
        BEGIN SELECT RAISE(ABORT, 'no room for jobs'); END;`);
    try {
      const refused = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input: {} } });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'queue-unavailable' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`)).body.total).toBe(0);
      expect(db.prepare('SELECT COUNT(*) FROM runs_seen').pluck().get()).toBe(0);
    } finally {
      db.exec('DROP TRIGGER jobs_refused; DROP TRIGGER runs_seen; DROP TABLE runs_seen;');
    }
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input: {} } });
    expect(started.status).toBe(202);
    expect(await waitForRun(t.request, started.body.runId)).toMatchObject({ status: 'succeeded' });
  });
});
