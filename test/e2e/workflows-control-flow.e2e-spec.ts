import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { startTestApp, TestApp } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';
import { addNotes, createCollection, waitForFile } from './collections-files.helpers';

/**
 * Control flow through the real doors: workflows saved over HTTP, started by their webhook, and
 * read back from the run records. Loops, sub-workflows, waits, retries, limits.
 */
describe('workflow control flow through the webhook', () => {
  let t: TestApp;
  let upstream: Upstream;
  let embeddings: FakeEmbeddingsServer;

  beforeAll(async () => {
    upstream = await startUpstream();
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1', EMBEDDINGS_URL: embeddings.url, JOB_CONCURRENCY: '8' });
  });

  afterAll(async () => {
    await t?.close();
    await embeddings?.close();
    await upstream?.close();
  });

  const create = async (definition: unknown, extra: Record<string, unknown> = {}) => {
    const res = await t.request('POST', '/api/v1/workflows', { body: { name: 'flow', definition, ...extra } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const start = (workflowId: string, input: unknown, query = '') =>
    t.request('POST', `/api/v1/workflows/${workflowId}/runs${query}`, { body: { runType: 'test', input } });
  /** A server answering `{late: true}`, closed: its port refuses until `late.listen(port)`. */
  const lateServer = async () => {
    const late: Server = createServer((req, res) => res.end(JSON.stringify({ late: true })));
    await new Promise<void>((resolve) => late.listen(0, '127.0.0.1', resolve));
    const port = (late.address() as AddressInfo).port;
    await new Promise<void>((resolve) => late.close(() => resolve()));
    return { late, port };
  };

  /** A workflow whose one node, `sub`, runs `childId` as a test run. */
  const callerOf = (childId: string) =>
    create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'sub', type: 'execute-workflow', parameters: { workflowId: childId, runType: 'test' } },
      ],
      edges: [{ from: 'trigger', to: 'sub' }],
    });
  const run = async (workflowId: string, input: unknown = {}) => {
    const res = await start(workflowId, input);
    expect(res.status).toBe(202);
    return waitForRun(t.request, res.body.runId);
  };
  const step = (record: any, nodeId: string) => record.steps.find((s: any) => s.nodeId === nodeId);
  const echo = (id: string, path: string, method = 'POST', body = 'input') => ({
    id,
    type: 'http-request',
    parameters: { method, url: `${upstream.url}/echo/${path}`, ...(method === 'GET' ? {} : { body }) },
    parameterMode: method === 'GET' ? {} : { body: 'expression' },
  });

  it('reads a collection of 45 files in a loop, computing the pages in the workflow', async () => {
    const collectionId = await createCollection(t, 'Loop over pages');
    const notes = await addNotes(t, collectionId, 45);
    for (const id of notes.keys()) expect((await waitForFile(t, collectionId, id)).status).toBe('indexed');
    const workflowId = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'pages', type: 'loop', parameters: { mode: 'repeat', maxIterations: 50 } },
        {
          id: 'list',
          type: 'list-files',
          runMode: 'input',
          parameters: { collectionId, offset: '${input.iteration * 20}' },
          parameterMode: { offset: 'expression' },
        },
        { id: 'read', type: 'get-file-contents', parameters: { collectionId } },
      ],
      edges: [
        { from: 'trigger', to: 'pages' },
        { from: 'pages', to: 'list', output: 'loop' },
        { from: 'list', to: 'read' },
        { from: 'read', to: 'pages' },
      ],
    });
    const record = await run(workflowId);
    expect(record.status).toBe('succeeded');
    // Pages of 20, 20 and 5 files, then an empty one ends the loop.
    expect(step(record, 'pages')).toMatchObject({ status: 'succeeded', iterations: 4 });
    expect(step(record, 'list')).toMatchObject({ iterations: 4 });
    expect((step(record, 'list').output as unknown[][]).map((page) => page.length)).toEqual([20, 20, 5, 0]);
    // A node with several outputs outputs an object of what each output received.
    const contents = record.output.done as { id: string; content: string }[];
    expect(contents).toHaveLength(45);
    expect(new Set(contents.map((c) => c.id))).toEqual(new Set(notes.keys()));
    expect(contents.every((c) => notes.get(c.id) === c.content)).toBe(true);
  });

  it('runs a sub-workflow, waits for it, and links parent and child both ways', async () => {
    const child = await create({
      nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, echo('call', 'child')],
      edges: [{ from: 'trigger', to: 'call' }],
    });
    expect((await t.request('POST', `/api/v1/workflows/${child}/publish`)).status).toBe(201);
    const parent = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'sub',
          type: 'execute-workflow',
          parameters: { workflowId: child, input: '({ asked: input.q })' },
          parameterMode: { input: 'expression' },
        },
      ],
      edges: [{ from: 'trigger', to: 'sub' }],
    });
    const record = await run(parent, { q: 'depth' });
    expect(record.status).toBe('succeeded');
    expect(record.output).toMatchObject({ response: { status: 200, body: { path: '/echo/child', body: { asked: 'depth' } } } });
    expect(record.children).toEqual([
      expect.objectContaining({ workflowId: child, status: 'succeeded', parentRunId: record.id, parentNodeId: 'sub' }),
    ]);
    const childRun = (await t.request('GET', `/api/v1/runs/${record.children[0].id}`)).body;
    expect(childRun).toMatchObject({ parentRunId: record.id, parentNodeId: 'sub', runType: 'production', status: 'succeeded' });
  });

  it("masks the parent's secrets in the records of a sub-workflow run that received them, which still uses them", async () => {
    const secret = 'sk-parent-only-7f3a9c21';
    const child = await create({
      nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, echo('call', 'child-secret')],
      edges: [{ from: 'trigger', to: 'call' }],
    });
    const parent = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'sub',
          type: 'execute-workflow',
          parameters: { workflowId: child, runType: 'test', input: '({ token: variables.apiKey, q: input.q })' },
          parameterMode: { input: 'expression' },
        },
      ],
      edges: [{ from: 'trigger', to: 'sub' }],
      variables: [{ name: 'apiKey', type: 'secret', value: secret }],
    });
    const bodies = () => upstream.received.filter((r) => r.path === '/echo/child-secret').map((r) => JSON.parse(r.body));
    const record = await run(parent, { q: 'hidden' });
    expect(record.status).toBe('succeeded');
    expect(bodies()).toEqual([{ token: secret, q: 'hidden' }]);
    const childRun = (await t.request('GET', `/api/v1/runs/${record.children[0].id}`)).body;
    expect(childRun).toMatchObject({ status: 'succeeded', input: { token: '[REDACTED]', q: 'hidden' } });
    expect(step(childRun, 'call').output.response.body.body).toEqual({ token: '[REDACTED]', q: 'hidden' });
    expect(JSON.stringify(childRun)).not.toContain(secret);
    expect(JSON.stringify(record)).not.toContain(secret);
    const listed = await t.request('GET', `/api/v1/runs?workflowId=${child}`);
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    // Retried on its own, the child run still gets the value it was given, and still masks it.
    const retried = await t.request('POST', `/api/v1/runs/${childRun.id}/retry`, { body: { from: 'start' } });
    expect(retried.status).toBe(202);
    const again = await waitForRun(t.request, retried.body.runId);
    expect(again.status).toBe('succeeded');
    expect(bodies()).toEqual([
      { token: secret, q: 'hidden' },
      { token: secret, q: 'hidden' },
    ]);
    expect(JSON.stringify(again)).not.toContain(secret);
  });

  it("keeps a sub-workflow's own secrets out of its parent's records: what the parent gets is what the child's record shows", async () => {
    const secret = 'sk-child-only-5b8e0d44';
    const child = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'leak',
          type: 'set',
          parameters: { fields: '({ key: variables.childKey, note: "kept" })' },
          parameterMode: { fields: 'expression' },
        },
      ],
      edges: [{ from: 'trigger', to: 'leak' }],
      variables: [{ name: 'childKey', type: 'secret', value: secret }],
    });
    const parent = await callerOf(child);
    const record = await run(parent);
    expect(record.status).toBe('succeeded');
    expect(step(record, 'sub').output).toEqual([{ key: '[REDACTED]', note: 'kept' }]);
    expect(JSON.stringify(record)).not.toContain(secret);
    const childRun = (await t.request('GET', `/api/v1/runs/${record.children[0].id}`)).body;
    expect(JSON.stringify(childRun)).not.toContain(secret);
  });

  it('goes on at once after a wait already due, and right after a very short one (no run left waiting for the reconciler)', async () => {
    const waiting = (parameters: Record<string, unknown>) =>
      create({
        nodes: [
          { id: 'trigger', type: 'webhook-trigger', parameters: {} },
          { id: 'pause', type: 'wait', parameters },
          { id: 'after', type: 'set', parameters: { fields: '({ done: true })' }, parameterMode: { fields: 'expression' } },
        ],
        edges: [
          { from: 'trigger', to: 'pause' },
          { from: 'pause', to: 'after' },
        ],
      });
    for (const parameters of [
      { amount: 0, unit: 'seconds' },
      { amount: 0, unit: 'seconds', until: '2020-01-01T00:00:00Z' },
      { amount: 0.005, unit: 'seconds' },
    ]) {
      const workflowId = await waiting(parameters);
      const answers = await Promise.all([1, 2, 3].map((i) => start(workflowId, { i }, '?wait=10')));
      for (const answer of answers) {
        expect({ parameters, status: answer.status, run: answer.body.status }).toEqual({ parameters, status: 200, run: 'succeeded' });
        expect(answer.body.output).toEqual([expect.objectContaining({ done: true })]);
      }
    }
  });

  it("fails the parent with the child's error when the sub-workflow fails", async () => {
    const child = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'boom', type: 'stop-and-error', parameters: { message: 'child refused' } },
      ],
      edges: [{ from: 'trigger', to: 'boom' }],
    });
    const parent = await callerOf(child);
    const record = await run(parent);
    expect(record.status).toBe('failed');
    expect(step(record, 'sub').error.message).toMatch(/child refused/);
  });

  it('retries a failed run from the failed node, reusing what the nodes before it produced', async () => {
    // A port with nothing listening yet: the second call fails until a server takes it.
    const { late, port } = await lateServer();
    const workflowId = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        echo('first', 'retry-first'),
        { id: 'second', type: 'http-request', parameters: { method: 'GET', url: `http://127.0.0.1:${port}/late` } },
      ],
      edges: [
        { from: 'trigger', to: 'first' },
        { from: 'first', to: 'second' },
      ],
    });
    const failed = await run(workflowId, { n: 1 });
    expect(failed.status).toBe('failed');
    expect(step(failed, 'second').status).toBe('failed');
    const firstCalls = () => upstream.received.filter((r) => r.path === '/echo/retry-first').length;
    expect(firstCalls()).toBe(1);

    await new Promise<void>((resolve) => late.listen(port, '127.0.0.1', resolve));
    try {
      const retried = await t.request('POST', `/api/v1/runs/${failed.id}/retry`, { body: { from: 'failed' } });
      expect(retried.status).toBe(202);
      expect(retried.headers.get('location')).toBe(`/api/v1/runs/${retried.body.runId}`);
      const record = await waitForRun(t.request, retried.body.runId);
      expect(record).toMatchObject({ status: 'succeeded', retryOf: failed.id, input: { n: 1 } });
      expect(step(record, 'first')).toMatchObject({ status: 'succeeded', reused: true });
      expect(step(record, 'second')).toMatchObject({ status: 'succeeded', output: { response: { body: { late: true } } } });
      expect(firstCalls()).toBe(1);

      const fromStart = await t.request('POST', `/api/v1/runs/${failed.id}/retry`, { body: { from: 'start' } });
      expect((await waitForRun(t.request, fromStart.body.runId)).status).toBe('succeeded');
      expect(firstCalls()).toBe(2);
    } finally {
      await new Promise<void>((resolve) => late.close(() => resolve()));
    }
    expect((await t.request('POST', `/api/v1/runs/${failed.id}/retry`, { body: { from: 'sideways' } })).status).toBe(400);
    expect((await t.request('POST', `/api/v1/runs/run_nope/retry`, { body: {} })).status).toBe(404);
  });

  it('on a retry from the failed node, runs again what came after a node that runs again, instead of reusing outputs made from its old error', async () => {
    const { late, port } = await lateServer();
    const workflowId = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        // Fails while nothing listens, and lets the run go on with its error as output.
        { id: 'flaky', type: 'http-request', parameters: { method: 'GET', url: `http://127.0.0.1:${port}/flaky` }, continueOnError: true },
        {
          id: 'shape',
          type: 'set',
          parameters: { fields: '({ sawError: item.error !== undefined })' },
          parameterMode: { fields: 'expression' },
        },
        { id: 'last', type: 'http-request', parameters: { method: 'GET', url: `http://127.0.0.1:${port}/last` } },
      ],
      edges: [
        { from: 'trigger', to: 'flaky' },
        { from: 'flaky', to: 'shape' },
        { from: 'shape', to: 'last' },
      ],
    });
    const failed = await run(workflowId);
    expect(failed.status).toBe('failed');
    expect(step(failed, 'shape')).toMatchObject({ status: 'succeeded', output: [expect.objectContaining({ sawError: true })] });

    await new Promise<void>((resolve) => late.listen(port, '127.0.0.1', resolve));
    try {
      const retried = await t.request('POST', `/api/v1/runs/${failed.id}/retry`, { body: { from: 'failed' } });
      const record = await waitForRun(t.request, retried.body.runId);
      expect(record.status).toBe('succeeded');
      expect(step(record, 'flaky').status).toBe('succeeded');
      expect(step(record, 'shape').reused).toBeUndefined();
      expect(step(record, 'shape').output).toEqual([expect.objectContaining({ sawError: false })]);
    } finally {
      await new Promise<void>((resolve) => late.close(() => resolve()));
    }
  });

  it('pauses a run at a Wait node without holding a worker, then finishes it', async () => {
    const workflowId = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'pause', type: 'wait', parameters: { amount: 1, unit: 'seconds' } },
        echo('after', 'after-wait'),
      ],
      edges: [
        { from: 'trigger', to: 'pause' },
        { from: 'pause', to: 'after' },
      ],
    });
    const started = await start(workflowId, { at: 'wait' });
    const waiting = await waitForRun(t.request, started.body.runId, { statuses: ['waiting'] });
    expect(waiting.resumeAt).toEqual(expect.any(String));
    expect(step(waiting, 'pause').status).toBe('waiting');
    const record = await waitForRun(t.request, started.body.runId);
    expect(record.status).toBe('succeeded');
    expect(step(record, 'after').output.response.body.body).toEqual({ at: 'wait' });
  });

  it('answers with the run record when ?wait= sees it finish, and 202 with its status now when time runs out', async () => {
    const quick = await create({
      nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, echo('call', 'quick')],
      edges: [{ from: 'trigger', to: 'call' }],
    });
    const done = await start(quick, { fast: true }, '?wait=10');
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'succeeded', output: { response: { body: { body: { fast: true } } } } });

    const slow = await create({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'call', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/slow?ms=8000` } },
      ],
      edges: [{ from: 'trigger', to: 'call' }],
    });
    // Time runs out while the run waits for its call: the 202 says it is running, not how it was accepted.
    const pending = await start(slow, {}, '?wait=4');
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({ runId: expect.any(String), status: 'running' });
    expect(pending.headers.get('location')).toBe(`/api/v1/runs/${pending.body.runId}`);
    for (const wait of ['0', '31', 'soon']) expect((await start(quick, {}, `?wait=${wait}`)).status).toBe(400);
  });

  it("answers 429 with Retry-After beyond the workflow's rate limit", async () => {
    const workflowId = await create(
      { nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }], edges: [] },
      { settings: { rateLimit: { requests: 2, perSeconds: 60 } } },
    );
    expect((await start(workflowId, {})).status).toBe(202);
    expect((await start(workflowId, {})).status).toBe(202);
    const refused = await start(workflowId, {});
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', details: { limit: { requests: 2, perSeconds: 60 } } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.settings).toEqual({
      rateLimit: { requests: 2, perSeconds: 60 },
    });

    // A changed limit counts afresh: the old window (here a minute) does not hold the new one.
    const { definition } = (await t.request('GET', `/api/v1/workflows/${workflowId}`)).body;
    const updated = await t.request('PUT', `/api/v1/workflows/${workflowId}`, {
      body: { definition, settings: { rateLimit: { requests: 3, perSeconds: 1 } } },
    });
    expect(updated.status).toBe(200);
    expect((await start(workflowId, {})).status).toBe(202);
  });

  it('runs at most maxConcurrentRuns runs of a workflow at once; the others wait their turn', async () => {
    const workflowId = await create(
      {
        nodes: [
          { id: 'trigger', type: 'webhook-trigger', parameters: {} },
          { id: 'call', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/slow?ms=400` } },
        ],
        edges: [{ from: 'trigger', to: 'call' }],
      },
      { settings: { maxConcurrentRuns: 1 } },
    );
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await start(workflowId, { i })).body.runId);
    const records = [];
    for (const id of ids) records.push(await waitForRun(t.request, id, { timeoutMs: 20_000 }));
    expect(records.every((r) => r.status === 'succeeded')).toBe(true);
    const spans = records.map((r) => [Date.parse(r.startedAt), Date.parse(r.finishedAt)]).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
    const invalid = await t.request('PUT', `/api/v1/workflows/${workflowId}`, {
      body: { definition: { nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }] }, settings: { maxConcurrentRuns: 0 } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.fields).toEqual([expect.objectContaining({ field: 'settings.maxConcurrentRuns' })]);
  });

  it('gives a place freed under maxConcurrentRuns to the run that has waited longest', async () => {
    const workflowId = await create(
      {
        nodes: [
          { id: 'trigger', type: 'webhook-trigger', parameters: {} },
          { id: 'call', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/slow?ms=700` } },
        ],
        edges: [{ from: 'trigger', to: 'call' }],
      },
      { settings: { maxConcurrentRuns: 1 } },
    );
    const first = (await start(workflowId, { n: 1 })).body.runId;
    await waitForRun(t.request, first, { statuses: ['running'] });
    const second = (await start(workflowId, { n: 2 })).body.runId;
    // The third arrives well after the second: a run that looked again on its own schedule could overtake it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const third = (await start(workflowId, { n: 3 })).body.runId;
    const records = [];
    for (const id of [first, second, third]) records.push(await waitForRun(t.request, id, { timeoutMs: 20_000 }));
    expect(records.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const [a, b, c] = records.map((r) => [Date.parse(r.startedAt), Date.parse(r.finishedAt)]);
    expect(b[0]).toBeGreaterThanOrEqual(a[1]);
    expect(c[0]).toBeGreaterThanOrEqual(b[1]);
  });

  it('refuses a schedule or MCP tool trigger whose parameters are not fixed, naming node and parameter, since they are read at publish', async () => {
    const scheduled = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'tick',
        definition: {
          nodes: [
            {
              id: 'tick',
              type: 'schedule-trigger',
              parameters: { cron: 'variables.cron', timezone: 'UTC' },
              parameterMode: { cron: 'expression' },
            },
          ],
        },
      },
    });
    expect(scheduled.status).toBe(400);
    expect(scheduled.body.details.fields).toEqual([
      expect.objectContaining({
        field: 'nodes[0].parameters.cron',
        nodeId: 'tick',
        reason: expect.stringMatching(/schedule.*must be fixed values, not an expression or template/),
      }),
    ]);
    const tool = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'tool',
        definition: {
          nodes: [
            {
              id: 'ask',
              type: 'mcp-trigger',
              parameters: { toolName: 'ask', inputSchema: '({ type: "object" })' },
              parameterMode: { inputSchema: 'expression' },
            },
          ],
        },
      },
    });
    expect(tool.status).toBe(400);
    expect(tool.body.details.fields).toEqual([
      expect.objectContaining({ field: 'nodes[0].parameters.inputSchema', nodeId: 'ask', reason: expect.stringMatching(/MCP tool/) }),
    ]);
    // Fixed, they are read when the version is published.
    const fixed = await create({ nodes: [{ id: 'tick', type: 'schedule-trigger', parameters: { cron: '*/5 * * * *', timezone: 'UTC' } }] });
    expect((await t.request('POST', `/api/v1/workflows/${fixed}/publish`)).status).toBe(201);
    expect((await t.request('GET', `/api/v1/workflows/${fixed}`)).body.schedule).toEqual({ cron: '*/5 * * * *', timezone: 'UTC' });
  });

  it('refuses a syntax error in an expression when the workflow is saved, naming node, parameter and position', async () => {
    const res = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'broken',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            {
              id: 'call',
              type: 'http-request',
              parameters: { method: 'POST', url: `${upstream.url}/echo/x`, body: '{"a": input.a +}' },
              parameterMode: { body: 'expression' },
            },
            {
              id: 'tpl',
              type: 'http-request',
              parameters: { method: 'GET', url: '${upstream.url}/${input.path' + ' +}' },
              parameterMode: { url: 'expression' },
            },
          ],
          edges: [
            { from: 'trigger', to: 'call' },
            { from: 'trigger', to: 'tpl' },
          ],
        },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'nodes[1].parameters.body',
          nodeId: 'call',
          line: 1,
          column: 16,
          reason: expect.stringMatching(/syntax error at line 1, column 16/),
        }),
        expect.objectContaining({ field: 'nodes[2].parameters.url', nodeId: 'tpl' }),
      ]),
    );
  });

  it('refuses an edge from an output the node does not have, and a cycle outside a loop', async () => {
    const res = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'bad graph',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'a', type: 'http-request', parameters: { method: 'GET', url: 'https://example.com' } },
            { id: 'b', type: 'http-request', parameters: { method: 'GET', url: 'https://example.com' } },
          ],
          edges: [
            { from: 'trigger', to: 'a', output: 'sideways' },
            { from: 'trigger', to: 'b' },
            { from: 'b', to: 'a' },
            { from: 'a', to: 'b' },
          ],
        },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'edges[0].output', reason: expect.stringContaining('has no output "sideways"') }),
        expect.objectContaining({ field: 'edges', reason: expect.stringContaining('cycle') }),
      ]),
    );
  });
});
