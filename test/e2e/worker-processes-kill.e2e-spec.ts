import { rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { bootService, freePort, logLines, processExists, Spawned, stopService, tempDir } from '../utils/processes';

const KEY = 'wcs_workers_bootstrap_key_0123456789abcdef';
/** Runs of one process at once (JOB_CONCURRENCY), set so the test knows what the gate can hold. */
const CONCURRENCY = 4;
/** More runs than both processes run at once: the rest wait queued through the kill. */
const RUNS = 12;

/**
 * `npm start` on every core: APP_ROLE=all with WORKERS=2 runs one worker process beside itself on
 * the same store and embedded queue. Runs are shared between the two and `?wait` answers whichever
 * ran them; a worker process killed with SIGKILL while runs are in flight is started again and
 * loses nothing; SIGTERM stops both.
 */
describe('npm start with worker processes', () => {
  let service: Spawned | undefined;
  let dataDir: string;
  let port: number;
  let gate: Server;
  let gateUrl: string;
  const held: Array<() => void> = [];
  let open = false;
  const pending: Array<(count: number) => void> = [];

  beforeAll(async () => {
    // The upstream a run's GET waits at until the test opens it; bounded, on 127.0.0.1.
    gate = createServer((req, res) => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      };
      if (open) return answer();
      held.push(answer);
      for (const wake of pending.splice(0)) wake(held.length);
    });
    gate.maxConnections = 64;
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
    dataDir = tempDir('workers');
    port = await freePort();
    service = await bootService(port, {
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: KEY,
      WORKERS: '2',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
      EMBEDDING_THREADS: '1',
      JOB_CONCURRENCY: String(CONCURRENCY),
      JOB_LEASE_MS: '3000',
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
    });
  }, 180_000);

  afterAll(async () => {
    await stopService(service);
    gate.closeAllConnections();
    await new Promise<void>((resolve) => gate.close(() => resolve()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const url = () => `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url() + path, {
      method,
      headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const publish = async (name: string, nodes: unknown[], edges: unknown[]) => {
    const created = await call('POST', '/api/v1/workflows', { name, definition: { nodes, edges } });
    expect(created.status).toBe(201);
    expect((await call('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };
  /** The worker processes' pids, from their "ready" lines. */
  const workerPids = (): number[] =>
    logLines(service!.output())
      .filter((line) => line.msg === 'worker process ready')
      .map((line) => line.pid as number);
  const readyWorkers = async (count: number): Promise<void> => {
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
      const ready = await fetch(`${url()}/health/ready`).then((r) => r.json() as Promise<any>);
      if (ready.details?.workers?.processes === count) return;
      if (Date.now() > deadline) throw new Error(`readiness says ${JSON.stringify(ready.details?.workers)}:\n${service!.output()}`);
    }
  };
  /** Pids of the processes that logged a finished run. */
  const runnerPids = (): Set<number> =>
    new Set(
      logLines(service!.output())
        .filter((line) => line.msg === 'run finished')
        .map((line) => line.pid as number),
    );

  /** `workflow_runs_total{status="succeeded"}` on the API port's /metrics. */
  const succeededOnMetrics = async (): Promise<number> => {
    const text = await fetch(`${url()}/metrics`).then((r) => r.text());
    return Number(/^workflow_runs_total\{status="succeeded"\} (\d+)$/m.exec(text)?.[1]);
  };
  /** Scrapes until /metrics counts `expected` succeeded runs: a busy worker may answer a scrape late. */
  const metricsReach = async (expected: number): Promise<void> => {
    let seen = NaN;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      seen = await succeededOnMetrics();
      if (seen === expected) return;
    }
    expect(seen).toBe(expected);
  };
  let succeeded = 0;

  it('runs in both processes, and ?wait answers with the finished run whichever ran it', async () => {
    await readyWorkers(2);
    const id = await publish(
      'shared',
      [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 's', type: 'set', parameters: { fields: { done: true } } },
      ],
      [{ from: 'trigger', to: 's' }],
    );
    const child = service!.child.pid!;
    for (let round = 0; round < 20 && runnerPids().size < 2; round++) {
      const answers = await Promise.all(
        // More than one process takes at once (JOB_CONCURRENCY 4, and as many again in the fair-share lane).
        Array.from({ length: 16 }, () => call('POST', `/api/v1/workflows/${id}/runs?wait=30`, { input: {} })),
      );
      for (const answer of answers) expect(answer.body).toMatchObject({ status: 'succeeded' });
      succeeded += answers.length;
    }
    expect([...runnerPids()].sort()).toEqual([child, ...workerPids()].sort());
    // The API port's /metrics counts the runs of every process, not only its own.
    await metricsReach(succeeded);
  }, 120_000);

  it('a worker process killed with SIGKILL mid-run is started again, its runs finish and /metrics keeps its count', async () => {
    const id = await publish(
      'gated',
      [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'fetch', type: 'http-request', parameters: { method: 'GET', url: `${gateUrl}/held` } },
      ],
      [{ from: 'trigger', to: 'fetch' }],
    );
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = await call('POST', `/api/v1/workflows/${id}/runs`, { input: { i } });
      expect(started.status).toBe(202);
      runIds.push(started.body.runId);
    }
    // Both processes fill up: each holds JOB_CONCURRENCY runs at the gate (the first run may be a
    // ninth, in the fair-share lane), and the rest stay queued. Waiting for all RUNS at the gate
    // waited for what two processes never run at once: held ones timed out (FETCH_TIMEOUT_MS) first.
    while (held.length < Math.min(RUNS, 2 * CONCURRENCY)) await new Promise<number>((resolve) => pending.push(resolve));
    const [victim] = workerPids().slice(-1);
    process.kill(victim, 'SIGKILL');
    for (const deadline = Date.now() + 30_000; processExists(victim); await new Promise((r) => setTimeout(r, 50))) {
      if (Date.now() > deadline) throw new Error(`worker ${victim} still runs after SIGKILL`);
    }
    open = true;
    for (const answer of held.splice(0)) answer();
    await readyWorkers(2);
    const restarted = logLines(service!.output()).filter((line) => line.msg === 'worker process exited; starting it again');
    expect(restarted).toEqual([expect.objectContaining({ pid: victim, signal: 'SIGKILL' })]);
    for (const runId of runIds) {
      for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 250))) {
        const run = await call('GET', `/api/v1/runs/${runId}`);
        // The GET is safe to send again: a run whose worker died resumes and succeeds.
        if (run.body.status === 'succeeded') break;
        if (['failed', 'canceled'].includes(run.body.status) || Date.now() > deadline) {
          throw new Error(`run ${runId} is ${run.body.status} ${JSON.stringify(run.body.error)}:\n${service!.output().slice(-5000)}`);
        }
      }
    }
    // The killed worker's earlier runs stay counted (a counter never goes back), and the resumed ones are added.
    await metricsReach(succeeded + RUNS);
  }, 240_000);

  it('SIGTERM stops the service and its worker processes', async () => {
    // The restarted worker's "ready" line may still sit in its log block (written at least every 250 ms).
    let workers = workerPids().filter(processExists);
    for (
      const deadline = Date.now() + 30_000;
      workers.length === 0 && Date.now() < deadline;
      await new Promise((r) => setTimeout(r, 100))
    ) {
      workers = workerPids().filter(processExists);
    }
    expect(workers.length).toBeGreaterThan(0);
    service!.child.kill('SIGTERM');
    expect(await service!.exited(60_000)).toEqual({ code: 0, signal: null });
    for (const pid of workers) expect(processExists(pid)).toBe(false);
    service = undefined;
  }, 90_000);
});
