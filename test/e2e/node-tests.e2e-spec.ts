import { startTestApp, TestApp } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

/** Testing one node of the draft on data of one's choice (n8n's partial execution), through the REST door. */
describe('node tests', () => {
  let t: TestApp;
  let upstream: Upstream;
  let workflowId: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'tested',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'shape', type: 'set', parameters: { fields: { shaped: true } } },
            {
              id: 'send',
              type: 'http-request',
              parameters: { method: 'POST', url: `${upstream.url}/echo/sent`, body: 'input' },
              parameterMode: { body: 'expression' },
            },
            { id: 'side', type: 'set', parameters: { fields: { side: true } } },
          ],
          edges: [
            { from: 'trigger', to: 'shape' },
            { from: 'shape', to: 'send' },
            { from: 'trigger', to: 'side' },
          ],
        },
      },
    });
    workflowId = created.body.id;
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
  });

  const test = (body: unknown) => t.request('POST', `/api/v1/workflows/${workflowId}/node-tests?wait=20`, { body });
  const ranNodes = (record: { steps: { nodeId: string; status: string }[] }) => record.steps.map((s) => [s.nodeId, s.status]);

  it('runs one node alone on the input given, recording only it', async () => {
    const answered = await test({ nodeId: 'shape', input: { order: 7 } });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({
      status: 'succeeded',
      trigger: 'node-test',
      runType: 'test',
      nodeTest: { nodeId: 'shape', andAfter: false },
      output: [{ order: 7, shaped: true }],
    });
    expect(ranNodes(answered.body)).toEqual([['shape', 'succeeded']]);
    expect(upstream.received).toHaveLength(0);
  });

  it('runs what follows with andAfter, and nothing from another branch', async () => {
    const answered = await test({ nodeId: 'shape', input: { order: 8 }, andAfter: true });
    expect(ranNodes(answered.body)).toEqual([
      ['shape', 'succeeded'],
      ['send', 'succeeded'],
    ]);
    expect(upstream.received.map((r) => JSON.parse(r.body))).toEqual([[{ order: 8, shaped: true }]]);
  });

  it('takes the data pinned on the node in the draft, which publishing leaves out', async () => {
    const current = await t.request('GET', `/api/v1/workflows/${workflowId}`);
    const pinned = await t.request('PUT', `/api/v1/workflows/${workflowId}`, {
      body: { definition: { ...current.body.definition, pinnedData: { shape: { pinned: 'yes' } } } },
    });
    expect(pinned.status).toBe(200);
    expect(pinned.body.definition.pinnedData).toEqual({ shape: { pinned: 'yes' } });
    expect((await test({ nodeId: 'shape' })).body.output).toEqual([{ pinned: 'yes', shaped: true }]);
    const version = await t.request('POST', `/api/v1/workflows/${workflowId}/publish`);
    expect(version.status).toBe(201);
    expect(version.body.definition.pinnedData).toBeUndefined();
    // A production run never reads it: the trigger's input goes on as always.
    const run = await t.request('POST', `/api/v1/workflows/${workflowId}/runs?wait=20`, { body: { input: { real: 1 } } });
    expect(run.body.steps.find((s: { nodeId: string }) => s.nodeId === 'shape').input).toEqual({ real: 1 });
  });

  it("takes the node's input from an earlier run when none is given or pinned", async () => {
    const current = await t.request('GET', `/api/v1/workflows/${workflowId}`);
    await t.request('PUT', `/api/v1/workflows/${workflowId}`, { body: { definition: { ...current.body.definition, pinnedData: {} } } });
    const earlier = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, {
      body: { runType: 'test', input: { from: 'earlier' } },
    });
    await waitForRun(t.request, earlier.body.id);
    const answered = await test({ nodeId: 'side', fromRunId: earlier.body.id });
    expect(answered.body.output).toEqual([{ from: 'earlier', side: true }]);
  });

  it('refuses what cannot be tested, saying what to give', async () => {
    const none = await test({ nodeId: 'shape' });
    expect(none.status).toBe(400);
    expect(none.body.details.fields).toEqual([{ field: 'input', reason: expect.stringContaining('pin data on node "shape"') }]);
    expect((await test({ nodeId: 'ghost', input: 1 })).body.details.fields[0]).toMatchObject({ field: 'nodeId' });
    const pin = await t.request('GET', `/api/v1/workflows/${workflowId}`);
    const bad = await t.request('PUT', `/api/v1/workflows/${workflowId}`, {
      body: { definition: { ...pin.body.definition, pinnedData: { ghost: 1 } } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details.fields).toEqual([{ field: 'pinnedData.ghost', reason: 'names no node of the workflow' }]);
    const viewer = await t.createUser('viewer');
    await t.request('PUT', `/api/v1/workflows/${workflowId}/members/${viewer.id}`, { body: { role: 'viewer' } });
    expect(
      (await t.request('POST', `/api/v1/workflows/${workflowId}/node-tests`, { key: viewer.key, body: { nodeId: 'shape', input: 1 } }))
        .status,
    ).toBe(403);
  });
});
