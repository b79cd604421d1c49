import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../utils/test-app';
import { searchWorkflow, startUpstream, testRedis, TestRedis, Upstream, waitForRun } from '../utils/workflows-fixtures';

const root = join(__dirname, '..', '..');
const SECRET = 'sk-worker-logs-5e1d0b77aa';
/** How long a dead worker keeps its runs (and Bull its jobs) before they are taken over. */
const LEASE_MS = '5000';

interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
}

/**
 * API in this process, workers as separate processes built from dist/ (APP_ROLE=worker), sharing
 * the store (and Redis, for Bull): the scale-out shape, where a worker can die without the API
 * noticing. The embedded queue lives in the store, so its workers can be separate processes too.
 */
describe.each([
  { queue: 'bull', redis: true },
  { queue: 'embedded', redis: false },
])('workflow runs with separate worker processes on the $queue queue', ({ redis: onRedis }) => {
  let app: TestApp;
  let upstream: Upstream;
  let redis: TestRedis | null;
  const workers: WorkerProcess[] = [];

  const startWorker = async (): Promise<WorkerProcess> => {
    const child = spawn(process.execPath, ['--no-node-snapshot', join(root, 'dist', 'src', 'main.js')], {
      env: {
        ...process.env,
        APP_ROLE: 'worker',
        // Several workers run at once here: none takes the default health port.
        WORKER_HEALTH_PORT: '0',
        DATA_DIR: app.dataDir,
        ...(onRedis ? { REDIS_URL: redis!.url, QUEUE_PREFIX: redis!.prefix } : { REDIS_URL: '' }),
        JOB_LEASE_MS: LEASE_MS,
        FETCH_ALLOWED_HOSTS: '127.0.0.1',
        LOG_LEVEL: 'trace',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const worker = { child, output: () => output };
    workers.push(worker);
    const deadline = Date.now() + 60_000;
    while (!output.includes('worker started')) {
      if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`worker did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return worker;
  };

  const stop = (worker: WorkerProcess, signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resolve();
      worker.child.once('exit', () => resolve());
      worker.child.kill(signal);
    });

  beforeAll(async () => {
    redis = await testRedis('workflow-workers');
    if (!redis) {
      if (process.env.CI) throw new Error('Redis is not reachable on 127.0.0.1:6379');
      return;
    }
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    upstream = await startUpstream();
    const queue: Record<string, string> = onRedis ? { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix } : {};
    app = await startTestApp({ APP_ROLE: 'api', ...queue, JOB_LEASE_MS: LEASE_MS, FETCH_ALLOWED_HOSTS: '127.0.0.1' });
  }, 240_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => stop(w, 'SIGKILL')));
    await app?.close();
    await upstream?.close();
    await redis?.cleanup();
  });

  it('runs in a worker process and no secret reaches its logs, even at trace level', async () => {
    if (!redis) return;
    const worker = await startWorker();
    const workflow = await app.request('POST', '/api/v1/workflows', {
      body: { name: 'logs', definition: searchWorkflow(upstream.url, SECRET) },
    });
    const started = await app.request('POST', `/api/v1/workflows/${workflow.body.id}/runs`, {
      body: { runType: 'test', input: { query: 'q', collection: 'c' } },
    });
    const run = await waitForRun(app.request, started.body.runId);
    expect(run.status).toBe('succeeded');
    expect(upstream.received.at(-1)?.headers['x-api-key']).toBe(SECRET);
    expect(JSON.stringify(run)).not.toContain(SECRET);
    await stop(worker, 'SIGTERM');
    expect(worker.output()).toContain(started.body.runId);
    expect(worker.output()).not.toContain(SECRET);
  }, 120_000);

  it('finishes a run whose worker was killed with SIGKILL mid-run, once a worker is back', async () => {
    if (!redis) return;
    const first = await startWorker();
    const workflow = await app.request('POST', '/api/v1/workflows', {
      body: {
        name: 'crash',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'slow', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/slow?ms=3000` } },
          ],
          edges: [{ from: 'trigger', to: 'slow' }],
        },
      },
    });
    await app.request('POST', `/api/v1/workflows/${workflow.body.id}/publish`);
    const arrived = upstream.received.length;
    const started = await app.request('POST', `/api/v1/workflows/${workflow.body.id}/runs`, { body: { input: { n: 1 } } });
    expect(started.status).toBe(202);

    await upstream.nth(arrived + 1);
    expect((await app.request('GET', `/api/v1/runs/${started.body.runId}`)).body.status).toBe('running');
    await stop(first, 'SIGKILL');

    await startWorker();
    const run = await waitForRun(app.request, started.body.runId, { timeoutMs: 150_000 });
    expect(run.status).toBe('succeeded');
    expect(run.attempts).toBe(2);
    expect(run.steps[1].output.response.status).toBe(200);
    expect(upstream.received.slice(arrived).filter((r) => r.path.startsWith('/slow')).length).toBeGreaterThanOrEqual(2);
  }, 200_000);

  it('resumes a run whose worker was killed from the last completed node, not from the start', async () => {
    if (!redis) return;
    // Only the worker this test kills may take the run.
    await Promise.all(workers.map((w) => stop(w, 'SIGTERM')));
    const first = await startWorker();
    const workflow = await app.request('POST', '/api/v1/workflows', {
      body: {
        name: 'resume',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'done', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/echo/resume-done` } },
            { id: 'slow', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/slow?ms=3000&resume=1` } },
          ],
          edges: [
            { from: 'trigger', to: 'done' },
            { from: 'done', to: 'slow' },
          ],
        },
      },
    });
    const started = await app.request('POST', `/api/v1/workflows/${workflow.body.id}/runs`, { body: { runType: 'test', input: { n: 2 } } });
    const slowCalls = () => upstream.received.filter((r) => r.path.includes('resume=1')).length;
    const doneCalls = () => upstream.received.filter((r) => r.path === '/echo/resume-done').length;
    while (slowCalls() === 0) await new Promise((r) => setTimeout(r, 20));
    // The step of the node that finished is written within its flush delay: give it that long.
    await new Promise((r) => setTimeout(r, 400));
    await stop(first, 'SIGKILL');

    await startWorker();
    const run = await waitForRun(app.request, started.body.runId, { timeoutMs: 150_000 });
    expect(run.status).toBe('succeeded');
    expect(run.attempts).toBe(2);
    expect(doneCalls()).toBe(1);
    expect(slowCalls()).toBe(2);
    expect(run.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['done', 'succeeded'],
      ['slow', 'succeeded'],
    ]);
  }, 200_000);
});
