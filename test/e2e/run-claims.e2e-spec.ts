import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { JobQueue } from '../../src/domain/job-queue.port';
import { RunStore } from '../../src/domain/run-store.port';
import { RUN_JOB } from '../../src/runs/run.job';
import { WorkflowSettingsCache } from '../../src/runs/workflow-settings-cache';
import { SqliteRunStore } from '../../src/storage/embedded/sqlite-run-store.adapter';
import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

/**
 * On the embedded default (SQLite, in-process queue), a run's claim is made in the transaction that
 * claims its job (JobClaiming): one commit where there were two. A second job for a run that is
 * running here never restarts it.
 */
describe('run claims with their jobs (SQLite)', () => {
  let t: TestApp;
  let upstream: Server;
  let upstreamUrl: string;
  const held: ServerResponse[] = [];
  let calls = 0;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      calls++;
      req.resume();
      held.push(res);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });
  afterEach(() => jest.restoreAllMocks());

  /** webhook -> set: one node after the trigger. */
  const WEBHOOK_SET = {
    nodes: [
      { id: 'trigger', type: 'webhook-trigger', parameters: {} },
      { id: 'shape', type: 'set', parameters: { fields: { done: 'yes' } } },
    ],
    edges: [{ from: 'trigger', to: 'shape' }],
  };
  const publish = async (definition: unknown) => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'claims', definition } });
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };
  const start = async (workflowId: string) => {
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input: {} } });
    expect(started.status).toBe(202);
    return started.body.runId as string;
  };

  it("claims a run in its job's claim when its workflow's limit is known, not in a write of its own", async () => {
    const workflowId = await publish(WEBHOOK_SET);
    // The workflow's settings as read less than 2 s ago (a cache the claim must not wait for): here, always.
    jest.spyOn(WorkflowSettingsCache.prototype, 'fresh').mockReturnValue({ settings: undefined });
    const ownClaims = jest.spyOn(SqliteRunStore.prototype, 'claim');

    const runIds = [];
    for (let i = 0; i < 3; i++) runIds.push(await start(workflowId));
    const runs = await Promise.all(runIds.map((id) => waitForRun(t.request, id)));

    expect(runs.map((run) => [run.status, run.attempts])).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
    expect(ownClaims).not.toHaveBeenCalled();
  });

  it("drops the steps' sealed state of a run that succeeded only when one was sealed: a run that sealed none skips that write", async () => {
    const oneNode = await publish(WEBHOOK_SET);
    const twoNodes = await publish({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'shape', type: 'set', parameters: { fields: { done: 'yes' } } },
        { id: 'again', type: 'set', parameters: { fields: { again: 'yes' } } },
      ],
      edges: [
        { from: 'trigger', to: 'shape' },
        { from: 'shape', to: 'again' },
      ],
    });
    const completions = jest.spyOn(SqliteRunStore.prototype, 'complete');
    const recorded = jest.spyOn(SqliteRunStore.prototype, 'recordSteps');

    const [bare, sealing] = [await start(oneNode), await start(twoNodes)];
    const runs = await Promise.all([bare, sealing].map((id) => waitForRun(t.request, id)));

    expect(runs.map((run) => run.status)).toEqual(['succeeded', 'succeeded']);
    const completionOf = (id: string) => completions.mock.calls.find(([runId]) => runId === id)?.[3];
    expect(completionOf(bare)).toMatchObject({ status: 'succeeded', statesSealed: false });
    // The middle node's outputs were sealed before the next node started, and are gone once the run succeeded.
    const sealed = recorded.mock.calls.filter(([runId]) => runId === sealing).flatMap(([, , steps]) => steps);
    expect(sealed.filter((step) => step.state != null).map((step) => step.nodeId)).toContain('shape');
    expect(completionOf(sealing)).toMatchObject({ status: 'succeeded', statesSealed: true });
    const stored = await t.app.get(RunStore).get(sealing);
    expect(stored?.steps.map((step) => step.state ?? null)).toEqual([null, null, null]);
  });

  it('never restarts a running run for a second job of it: that job waits and finds it done', async () => {
    const workflowId = await publish({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'call', type: 'http-request', parameters: { method: 'POST', url: `${upstreamUrl}/hold`, body: '{}' } },
      ],
      edges: [{ from: 'trigger', to: 'call' }],
    });
    jest.spyOn(WorkflowSettingsCache.prototype, 'fresh').mockReturnValue({ settings: undefined });
    const runId = await start(workflowId);
    await waitForRun(t.request, runId, { statuses: ['running'] });
    while (calls < 1) await new Promise((resolve) => setTimeout(resolve, 20));

    const queue = t.app.get(JobQueue);
    await queue.enqueue(RUN_JOB, { runId, workflowId }, { jobId: `${runId}.second` });
    while ((await queue.state(RUN_JOB, `${runId}.second`)) !== 'active') await new Promise((resolve) => setTimeout(resolve, 20));
    for (const res of held.splice(0)) res.end('{}');

    const run = await waitForRun(t.request, runId);
    while ((await queue.state(RUN_JOB, `${runId}.second`)) !== 'missing') await new Promise((resolve) => setTimeout(resolve, 20));
    expect([run.status, run.attempts, calls]).toEqual(['succeeded', 1, 1]);
  });
});
