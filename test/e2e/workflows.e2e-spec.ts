import { startTestApp, TestApp } from '../utils/test-app';
import { bothQueues } from '../utils/queues';
import { searchWorkflow, startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

const SECRET = 'sk-live-e2e-7f3a9c1d5b';
const queues = bothQueues('workflows');

describe.each(queues)('workflow runs on $name', (queue) => {
  let app: TestApp;
  let upstream: Upstream;
  beforeAll(async () => {
    const env = await queue.env();
    upstream = await startUpstream();
    app = await startTestApp({ ...env, FETCH_ALLOWED_HOSTS: '127.0.0.1', JOB_CONCURRENCY: '8' });
  });

  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    await queue.cleanup();
  });

  const createWorkflow = async (definition: unknown, key?: string) => {
    const res = await app.request('POST', '/api/v1/workflows', { body: { name: 'search', definition }, key });
    expect(res.status).toBe(201);
    return res.body as { id: string; definition: any };
  };

  const start = (id: string, body: unknown, headers: Record<string, string> = {}, key?: string) =>
    app.request('POST', `/api/v1/workflows/${id}/runs`, { body, headers, key });

  it('publishes webhook-trigger -> http-request, queues at once, and runs draft vs published', async () => {
    const workflow = await createWorkflow(searchWorkflow(upstream.url, SECRET, 'published'));
    expect(workflow.definition.variables).toEqual([
      { name: 'baseUrl', type: 'string', value: upstream.url },
      { name: 'apiKey', type: 'secret', value: null, set: true },
    ]);
    expect((await app.request('POST', `/api/v1/workflows/${workflow.id}/publish`)).body).toMatchObject({ version: 1, active: true });

    // The draft moves on; the secret is sent back as null, which keeps it.
    const draft = searchWorkflow(upstream.url, SECRET, 'draft');
    draft.variables[1].value = null as unknown as string;
    const updated = await app.request('PUT', `/api/v1/workflows/${workflow.id}`, { body: { definition: draft } });
    expect(updated.status).toBe(200);

    const input = { query: 'what is a vector', collection: 'col_42' };
    const production = await start(workflow.id, { input });
    expect(production.status).toBe(202);
    expect(production.body).toEqual({
      id: production.body.runId,
      runId: expect.stringMatching(/^run_/),
      workflowId: workflow.id,
      runType: 'production',
      status: 'queued',
    });
    expect(production.headers.get('location')).toBe(`/api/v1/runs/${production.body.runId}`);

    const test = await start(workflow.id, { runType: 'test', input: { ...input, query: 'draft query' } });
    expect(test.status).toBe(202);
    expect(test.body.runType).toBe('test');

    const run = await waitForRun(app.request, production.body.runId);
    expect(run).toMatchObject({
      status: 'succeeded',
      runType: 'production',
      version: 1,
      startedBy: app.admin.id,
      actingUserId: app.admin.id,
      input,
      error: null,
    });
    expect(run.steps.map((s: any) => [s.nodeId, s.status, s.attempts])).toEqual([
      ['trigger', 'succeeded', 1],
      ['search', 'succeeded', 1],
    ]);
    expect(run.steps[0].output).toEqual(input);
    const response = run.steps[1].output.response;
    expect(response.status).toBe(200);
    expect(response.headers['x-upstream']).toBe('yes');
    expect(response.body).toMatchObject({ method: 'POST', path: '/echo/col_42', body: { text: 'what is a vector', top_k: '5' } });
    expect(response.body.headers).toMatchObject({
      'x-api-key': '[REDACTED]',
      'x-flavour': 'published',
      'content-type': 'application/json',
    });
    for (const timing of [run.createdAt, run.startedAt, run.finishedAt, run.steps[1].startedAt, run.steps[1].finishedAt])
      expect(Date.parse(timing)).not.toBeNaN();

    const testRun = await waitForRun(app.request, test.body.runId);
    expect(testRun).toMatchObject({ status: 'succeeded', runType: 'test', version: null });
    expect(testRun.steps[1].output.response.body).toMatchObject({ headers: { 'x-flavour': 'draft' }, body: { text: 'draft query' } });

    // The upstream got the real secret; nothing the API returns holds it.
    const atUpstream = upstream.received.filter((r) => r.path === '/echo/col_42');
    expect(atUpstream.map((r) => r.headers['x-api-key'])).toEqual([SECRET, SECRET]);
    const everything = await Promise.all([
      app.request('GET', `/api/v1/runs/${production.body.runId}`),
      app.request('GET', `/api/v1/runs/${test.body.runId}`),
      app.request('GET', `/api/v1/runs?workflowId=${workflow.id}`),
      app.request('GET', `/api/v1/workflows/${workflow.id}`),
      app.request('GET', '/api/v1/workflows'),
      app.request('GET', `/api/v1/workflows/${workflow.id}/versions/1`),
    ]);
    for (const res of everything) expect(JSON.stringify(res.body)).not.toContain(SECRET);
  });

  it('answers 405 with Allow: POST for other methods on the webhook path', async () => {
    const workflow = await createWorkflow(undefined);
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await app.request(method, `/api/v1/workflows/${workflow.id}/runs`);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('refuses unknown workflows, bad bodies, and production runs of unpublished workflows', async () => {
    const workflow = await createWorkflow(undefined);
    expect((await start('wfl_missing', {})).status).toBe(404);
    const badType = await start(workflow.id, { runType: 'staging' });
    expect(badType.status).toBe(400);
    expect(badType.body.details.fields).toEqual([expect.objectContaining({ field: 'runType' })]);
    expect((await start(workflow.id, { input: 1, extra: true })).status).toBe(400);
    expect((await start(workflow.id, [1, 2])).status).toBe(400);
    const malformed = await app.request('POST', `/api/v1/workflows/${workflow.id}/runs`, {
      rawBody: '{"input": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    const notPublished = await start(workflow.id, { input: {} });
    expect(notPublished.status).toBe(409);
    expect(notPublished.body.code).toBe('CONFLICT');
    expect((await start(workflow.id, {}, {}, 'wcs_not_a_key')).status).toBe(401);
    // With no body at all the run is a production run of nothing published.
    expect((await app.request('POST', `/api/v1/workflows/${workflow.id}/runs`)).status).toBe(409);
  });

  it('returns the first run for a repeated Idempotency-Key', async () => {
    const workflow = await createWorkflow(undefined);
    const first = await start(workflow.id, { runType: 'test', input: { n: 1 } }, { 'idempotency-key': 'order-17' });
    const second = await start(workflow.id, { runType: 'test', input: { n: 2 } }, { 'idempotency-key': 'order-17' });
    const other = await start(workflow.id, { runType: 'test', input: { n: 3 } }, { 'idempotency-key': 'order-18' });
    expect(second.status).toBe(202);
    expect(second.body.runId).toBe(first.body.runId);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(other.body.runId).not.toBe(first.body.runId);
    const runs = await app.request('GET', `/api/v1/runs?workflowId=${workflow.id}`);
    expect(runs.body.total).toBe(2);
    expect((await waitForRun(app.request, first.body.runId)).input).toEqual({ n: 1 });
  });

  it('answers 400 with per-node details for a bad definition', async () => {
    const res = await app.request('POST', '/api/v1/workflows', {
      body: {
        name: 'broken',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'ghost', type: 'no-such-node', parameters: {} },
            { id: 'a', type: 'http-request', parameters: { method: 'GET', url: 'https://x' } },
            { id: 'b', type: 'http-request', parameters: { method: 'YELL', url: 'https://x' } },
          ],
          edges: [
            { from: 'trigger', to: 'ghost' },
            { from: 'trigger', to: 'a' },
            { from: 'a', to: 'b' },
            { from: 'b', to: 'a' },
            { from: 'b', to: 'nowhere' },
          ],
          variables: [{ name: 'limit', type: 'number', value: 'ten' }],
        },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'nodes[1].type', nodeId: 'ghost' }),
        expect.objectContaining({ field: 'nodes[3].parameters.method', nodeId: 'b' }),
        expect.objectContaining({ field: 'edges[4].to', reason: expect.stringContaining('nowhere') }),
        expect.objectContaining({ field: 'edges', reason: expect.stringContaining('cycle') }),
        expect.objectContaining({ field: 'variables[0].value', reason: expect.stringContaining('number') }),
      ]),
    );
    const shape = await app.request('POST', '/api/v1/workflows', {
      body: { name: 'x', definition: { nodes: [{ id: '1 bad', type: 'x' }] } },
    });
    expect(shape.status).toBe(400);
    expect(shape.body.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'definition.nodes[0].id' })]));
  });

  it('rolls back to an older version', async () => {
    const workflow = await createWorkflow(searchWorkflow(upstream.url, SECRET, 'v1'));
    await app.request('POST', `/api/v1/workflows/${workflow.id}/publish`);
    await app.request('PUT', `/api/v1/workflows/${workflow.id}`, { body: { definition: searchWorkflow(upstream.url, SECRET, 'v2') } });
    expect((await app.request('POST', `/api/v1/workflows/${workflow.id}/publish`)).body.version).toBe(2);
    const versions = await app.request('GET', `/api/v1/workflows/${workflow.id}/versions`);
    expect(versions.body.items.map((v: any) => [v.version, v.active])).toEqual([
      [2, true],
      [1, false],
    ]);
    const rolledBack = await app.request('POST', `/api/v1/workflows/${workflow.id}/versions/1/activate`);
    expect(rolledBack.body.activeVersion).toBe(1);
    const run = await waitForRun(app.request, (await start(workflow.id, { input: { query: 'q', collection: 'c' } })).body.runId);
    expect(run).toMatchObject({ status: 'succeeded', version: 1 });
    expect(run.steps[1].output.response.body.headers['x-flavour']).toBe('v1');
    expect((await app.request('POST', `/api/v1/workflows/${workflow.id}/versions/9/activate`)).status).toBe(404);
  });

  it('gives workflows the roles of collections: viewers read, editors run, strangers see nothing', async () => {
    const viewer = await app.createUser('viewer');
    const editor = await app.createUser('editor');
    const stranger = await app.createUser('stranger');
    const workflow = await createWorkflow(undefined);
    expect((await app.request('PUT', `/api/v1/workflows/${workflow.id}/members/${viewer.id}`, { body: { role: 'viewer' } })).status).toBe(
      200,
    );
    await app.request('PUT', `/api/v1/workflows/${workflow.id}/members/${editor.id}`, { body: { role: 'editor' } });
    expect((await app.request('GET', `/api/v1/workflows/${workflow.id}`, { key: viewer.key })).body.role).toBe('viewer');
    expect((await start(workflow.id, { runType: 'test' }, {}, viewer.key)).status).toBe(403);
    const byEditor = await start(workflow.id, { runType: 'test', input: 'hello' }, {}, editor.key);
    expect(byEditor.status).toBe(202);
    const run = await waitForRun(app.request, byEditor.body.runId, { key: viewer.key });
    expect(run).toMatchObject({ status: 'succeeded', startedBy: editor.id, actingUserId: editor.id });
    expect((await app.request('GET', `/api/v1/runs/${byEditor.body.runId}`, { key: stranger.key })).status).toBe(404);
    expect((await start(workflow.id, { runType: 'test' }, {}, stranger.key)).status).toBe(404);
    expect((await app.request('GET', '/api/v1/runs', { key: stranger.key })).body.total).toBe(0);
    expect((await app.request('DELETE', `/api/v1/workflows/${workflow.id}`, { key: editor.key })).status).toBe(403);
  });

  it('cancels a running run at its current step', async () => {
    const workflow = await createWorkflow({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'slow', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/slow?ms=20000` } },
        { id: 'after', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/echo/after` } },
      ],
      edges: [
        { from: 'trigger', to: 'slow' },
        { from: 'slow', to: 'after' },
      ],
    });
    const arrived = upstream.received.length;
    const started = await start(workflow.id, { runType: 'test' });
    await upstream.nth(arrived + 1);
    const canceled = await app.request('POST', `/api/v1/runs/${started.body.runId}/cancel`);
    expect(canceled.status).toBe(200);
    const run = await waitForRun(app.request, started.body.runId);
    expect(run.status).toBe('canceled');
    expect(run.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['slow', 'canceled'],
      ['after', 'skipped'],
    ]);
    expect(upstream.received.some((r) => r.path === '/echo/after')).toBe(false);
    expect((await app.request('POST', `/api/v1/runs/${started.body.runId}/cancel`)).status).toBe(200);
  });

  it('lists node types with their parameter schemas', async () => {
    const res = await app.request('GET', '/api/v1/node-types');
    const http = res.body.items.find((n: any) => n.type === 'http-request');
    expect(http).toMatchObject({ version: 1, trigger: false, parameters: { required: ['method', 'url'] } });
    // A status is data unless failOn says otherwise: the parameter and its choices are documented where the builder reads them.
    expect(http.parameters.properties.failOn).toMatchObject({
      type: 'string',
      enum: ['never', '5xx', 'non-2xx'],
      default: 'never',
      description: expect.stringContaining('a 500 goes on'),
    });
    expect(res.body.items.find((n: any) => n.type === 'webhook-trigger')).toMatchObject({ trigger: true });
    expect(res.body.items.map((n: any) => n.type)).toEqual(
      expect.arrayContaining(['get-file-contents', 'http-request', 'list-files', 'loop', 'wait', 'webhook-trigger']),
    );
    // Every parameter takes every mode; AI Decide only where a language model is configured.
    expect(res.body.parameterModes).toEqual(['fixed', 'expression']);
  });
});
