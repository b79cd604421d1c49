import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { bothQueues } from '../utils/queues';
import { startTestApp, TestApp } from '../utils/test-app';
import { testRedis, waitForRun } from '../utils/workflows-fixtures';

const WEBHOOK_ONLY = { nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }], edges: [] };
const DEADLINE_MS = 60_000;

/** The value of one sample of the exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Admission control through the webhook: API-only processes (APP_ROLE=api) run no worker, so what
 * is accepted stays queued and the limits are met deterministically.
 */
describe.each(bothQueues('backpressure'))('admission control on $name', (queue) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ ...(await queue.env()), APP_ROLE: 'api', RUNS_MAX_QUEUED: '5', RUNS_MAX_QUEUED_PER_WORKFLOW: '3' });
  });

  afterAll(async () => {
    await t?.close();
    await queue.cleanup();
  });

  const workflow = async (settings?: Record<string, unknown>): Promise<string> => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: { name: 'busy', definition: WEBHOOK_ONLY, ...(settings ? { settings } : {}) },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  };
  const post = (workflowId: string, headers: Record<string, string> = {}) =>
    t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { runType: 'test', input: { n: 1 } }, headers });
  const runsOf = async (workflowId: string) => (await t.request('GET', `/api/v1/runs?workflowId=${workflowId}&limit=100`)).body;

  it("answers 429 with Retry-After beyond the workflow's queued-run limit, which its settings may only lower, and starts no run", async () => {
    const lowered = await workflow({ maxQueuedRuns: 2 });
    const keyed = await post(lowered, { 'idempotency-key': 'accepted-before' });
    expect(keyed.status).toBe(202);
    expect((await post(lowered)).status).toBe(202);
    // At the limit, a repeated key still answers with the run it started: that run was accepted.
    const repeated = await post(lowered, { 'idempotency-key': 'accepted-before' });
    expect(repeated.status).toBe(202);
    expect(repeated.body.id).toBe(keyed.body.id);
    const refused = await post(lowered, { 'idempotency-key': 'over-the-limit' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('2 run(s) queued'),
      details: { reason: 'workflow-queue-limit', limit: 2, queued: 2, retryAfterSeconds: Number(refused.headers.get('retry-after')) },
    });
    expect((await runsOf(lowered)).total).toBe(2);

    // A setting above the service's limit (3 here) does not raise it.
    const raised = await t.request('PUT', `/api/v1/workflows/${lowered}`, {
      body: { definition: WEBHOOK_ONLY, settings: { maxQueuedRuns: 100 } },
    });
    expect(raised.status).toBe(200);
    expect(raised.body.settings).toMatchObject({ maxQueuedRuns: 100 });
    expect((await post(lowered)).status).toBe(202);
    expect((await post(lowered)).body).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 3 } });
    expect((await runsOf(lowered)).total).toBe(3);
  });

  it('refuses a setting that is no positive whole number, naming the field', async () => {
    const res = await t.request('POST', '/api/v1/workflows', {
      body: { name: 'bad', definition: WEBHOOK_ONLY, settings: { maxQueuedRuns: 0 } },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.details)).toContain('maxQueuedRuns');
  });

  it("answers 503 with Retry-After beyond the service's queued-run limit, and starts no run", async () => {
    // 3 runs are queued by the test before; 2 more reach RUNS_MAX_QUEUED (5).
    const other = await workflow();
    expect((await post(other)).status).toBe(202);
    expect((await post(other)).status).toBe(202);
    const refused = await post(await workflow());
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('RUNS_MAX_QUEUED'),
      details: { reason: 'global-queue-limit', limit: 5, queued: 5 },
    });
    const all = await t.request('GET', '/api/v1/runs?status=queued&limit=100');
    expect(all.body.total).toBe(5);
    expect((await post(other)).status).toBe(503);
  });

  it('shows the queued runs and the age of the oldest in /metrics and /health/ready', async () => {
    const metrics = await until(
      'the queue gauges',
      async () => (await fetch(`${t.url}/metrics`)).text(),
      (text) => sample(text, 'workflow_runs_queued') === 5,
    );
    expect(sample(metrics, 'workflow_run_queue_age_seconds')).toBeGreaterThan(0);
    expect(sample(metrics, 'workflow_runs_refused_total{reason="workflow-queue-limit",trigger="webhook"}')).toBe(2);
    expect(sample(metrics, 'workflow_runs_refused_total{reason="global-queue-limit",trigger="webhook"}')).toBe(2);
    const ready = await t.request('GET', '/health/ready', { key: null });
    expect(ready.status).toBe(200);
    expect(ready.body.details.runs).toMatchObject({ status: 'up', queued: 5, oldestAgeSeconds: expect.any(Number) });
    expect(ready.body.details.runs.oldestAgeSeconds).toBeGreaterThan(0);
  });

  it('refuses a workflow tool call over MCP the same way, with a result the model can read, and starts no run', async () => {
    const definition = {
      nodes: [
        {
          id: 'ask',
          type: 'mcp-trigger',
          parameters: { toolName: 'busy_tool', description: 'A tool of a busy service.', inputSchema: { type: 'object', properties: {} } },
        },
        { id: 'answer', type: 'respond', parameters: {} },
      ],
      edges: [{ from: 'ask', to: 'answer' }],
    };
    const id = (await t.request('POST', '/api/v1/workflows', { body: { name: 'busy tool', definition } })).body.id as string;
    expect((await t.request('POST', `/api/v1/workflows/${id}/publish`)).status).toBe(201);
    const client = new Client({ name: 'backpressure-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${t.admin.key}` } } }),
    );
    try {
      const result = (await client.callTool({ name: 'busy_tool', arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('RUNS_MAX_QUEUED');
    } finally {
      await client.close();
    }
    expect((await runsOf(id)).total).toBe(0);
  });
});

/** A free TCP port on 127.0.0.1 for a Redis of the test's own. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A throwaway redis-server on 127.0.0.1 that the test can kill and bring back on the same port. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + DEADLINE_MS;
  while (!output.includes('Ready to accept connections')) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/**
 * Bull on a Redis that goes away: the webhook answers 503 (the enqueue gets RUNS_ENQUEUE_TIMEOUT_MS,
 * 1.5 s by default) and leaves no run behind; once Redis is back, the same Idempotency-Key starts the
 * run, once. Runs with a worker (APP_ROLE=all), so the run the retry starts is seen to finish.
 */
describe('a webhook while the queue backend is unreachable (Bull)', () => {
  let t: TestApp | undefined;
  let redis: ChildProcess | undefined;
  let port: number;

  beforeAll(async () => {
    // The same prerequisite as the other Bull suites: redis-server installed where Redis runs.
    if (!(await testRedis('backpressure-probe')))
      throw new Error('Redis is not reachable on 127.0.0.1:6379: start it (see README, "Test it") to run this suite on Bull');
    port = await freePort();
    redis = await startRedis(port);
    t = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${port}`, QUEUE_PREFIX: 'backpressure' });
  });

  afterAll(async () => {
    // Bull reconnects to the Redis brought back below: close it while that one is still up.
    await t?.close();
    if (redis) await killed(redis);
  });

  it('answers 503 and keeps no run, then starts the run once when retried with its Idempotency-Key', async () => {
    const app = t!;
    const created = await app.request('POST', '/api/v1/workflows', { body: { name: 'down', definition: WEBHOOK_ONLY } });
    const id = created.body.id as string;
    const post = () =>
      app.request('POST', `/api/v1/workflows/${id}/runs`, {
        body: { runType: 'test', input: { n: 1 } },
        headers: { 'idempotency-key': 'order-42' },
      });

    await killed(redis!);
    const refused = await post();
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'queue-unavailable' } });
    expect((await app.request('GET', `/api/v1/runs?workflowId=${id}`)).body.total).toBe(0);

    redis = await startRedis(port);
    await until(
      'readiness with Redis back',
      () => app.request('GET', '/health/ready', { key: null }),
      (res) => res.status === 200,
    );
    const started = await post();
    expect(started.status).toBe(202);
    const again = await post();
    expect(again.body.runId).toBe(started.body.runId);
    expect(await waitForRun(app.request, started.body.runId)).toMatchObject({ status: 'succeeded' });
    expect((await app.request('GET', `/api/v1/runs?workflowId=${id}`)).body.total).toBe(1);
  });
});
