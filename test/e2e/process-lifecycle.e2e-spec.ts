import { availableParallelism } from 'node:os';
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, isListening, logLines, processExists, Spawned, spawnCollecting, tempDir, waitForHttp } from '../utils/processes';
import { startUpstream } from '../utils/workflows-fixtures';

const root = join(__dirname, '..', '..');
const KEY = 'wcs_lifecycle_bootstrap_key_0123456789';

/**
 * `npm start` as an operator runs it (npm -> its script shell -> node), stopped by one signal sent
 * to the npm process only, as a process manager or `kill <pid>` does: nothing may be left running
 * or listening, and the service says when shutdown starts and when it is done.
 */
describe('npm start: a signal to npm stops the service', () => {
  const started: Spawned[] = [];
  const dataDirs: string[] = [];
  const pids: number[] = [];

  beforeAll(() => {
    // npm's prestart builds when dist/ is stale; build first so every start below is quick.
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
  }, 240_000);

  afterAll(() => {
    // Only if an assertion failed midway: nothing of ours outlives the suite.
    for (const spawned of started) if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGKILL');
    for (const pid of pids) if (processExists(pid)) process.kill(pid, 'SIGKILL');
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  const npmStart = (env: Record<string, string>): Spawned => {
    const dataDir = tempDir('lifecycle');
    dataDirs.push(dataDir);
    const spawned = spawnCollecting('npm', ['start'], {
      cwd: root,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        EMBEDDING_THREADS: '1',
        BOOTSTRAP_API_KEY: KEY,
        REDIS_URL: '',
        ...env,
      },
    });
    started.push(spawned);
    return spawned;
  };

  /** The pid of the node process that logged `msg` (the service, not npm). */
  /** The pid on the service's `msg` line; log lines are written in blocks (at least every 250 ms), so it may follow the health answer. */
  const servicePid = async (spawned: Spawned, msg: string): Promise<number> => {
    for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const line = logLines(spawned.output()).find((l) => l.msg === msg);
      if (typeof line?.pid === 'number') {
        pids.push(line.pid);
        return line.pid;
      }
      if (Date.now() > deadline) throw new Error(`no "${msg}" line:\n${spawned.output()}`);
    }
  };

  const expectStoppedCleanly = async (spawned: Spawned, pid: number, port: number, signal: NodeJS.Signals) => {
    const exit = await spawned.exited(45_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(processExists(pid)).toBe(false);
    expect(await isListening(port)).toBe(false);
    const lines = logLines(spawned.output()).filter((l) => l.pid === pid);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'shutdown started', signal, level: 30 }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'shutdown complete', signal, ms: expect.any(Number) }));
  };

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'API and workers in one process (APP_ROLE=all): %s',
    async (signal) => {
      const port = await freePort();
      const spawned = npmStart({ APP_ROLE: 'all', PORT: String(port) });
      await waitForHttp(`http://127.0.0.1:${port}/health/ready`, spawned);
      const pid = await servicePid(spawned, 'listening');
      expect(pid).not.toBe(spawned.child.pid);
      // npm start's default uses every core: one process per core, WORKERS unset.
      const listening = logLines(spawned.output()).find((l) => l.msg === 'listening');
      expect(listening?.workers).toBe(process.env.WORKERS ? Number(process.env.WORKERS) : Math.max(1, availableParallelism()));

      spawned.child.kill(signal);

      await expectStoppedCleanly(spawned, pid, port, signal);
    },
    150_000,
  );

  it('while it stops: new requests get 503, a ?wait= call answers at once, a node that must not run twice finishes', async () => {
    const upstream = await startUpstream();
    try {
      const port = await freePort();
      const spawned = npmStart({ APP_ROLE: 'all', PORT: String(port), FETCH_ALLOWED_HOSTS: '127.0.0.1' });
      const url = `http://127.0.0.1:${port}`;
      await waitForHttp(`${url}/health/ready`, spawned);
      const pid = await servicePid(spawned, 'listening');
      const call = (path: string, body?: unknown) =>
        fetch(url + path, {
          method: 'POST',
          headers: { 'x-api-key': KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const created = (await (
        await call('/api/v1/workflows', {
          name: 'slow post',
          definition: {
            nodes: [
              { id: 'trigger', type: 'webhook-trigger', parameters: {} },
              // POST: not idempotent, so a stopping worker lets it finish rather than cut it short.
              { id: 'post', type: 'http-request', parameters: { method: 'POST', url: `${upstream.url}/slow?ms=3000`, body: '{}' } },
            ],
            edges: [{ from: 'trigger', to: 'post' }],
          },
        })
      ).json()) as { id: string };
      expect((await call(`/api/v1/workflows/${created.id}/publish`)).status).toBe(201);

      const waiting = call(`/api/v1/workflows/${created.id}/runs?wait=30`, { input: {} });
      await upstream.nth(1);
      spawned.child.kill('SIGTERM');

      // Answered before its run could finish (the POST takes 3 s): 202 with the run still going, not
      // the 200 a finished run gets. No clock in it: a loaded machine only makes it later.
      const answered = await waiting;
      expect(answered.status).toBe(202);
      expect(((await answered.json()) as { status: string }).status).toMatch(/^(queued|running)$/);
      const refused = await fetch(`${url}/api/v1/me`, { headers: { 'x-api-key': KEY } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('connection')).toBe('close');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ code: 'UNAVAILABLE' });
      // A new connection while the run drains is answered the same way, not refused.
      expect(await statusOnNewConnection(`${url}/api/v1/me`)).toBe(503);

      await expectStoppedCleanly(spawned, pid, port, 'SIGTERM');
      expect(upstream.received.filter((r) => r.method === 'POST')).toHaveLength(1);
      const lines = logLines(spawned.output()).filter((l) => l.pid === pid);
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'run finished', status: 'succeeded' }));
      // Turned away on purpose: no error line with a stack for each refused request.
      expect(lines.filter((l) => l.msg === 'request failed')).toEqual([]);
    } finally {
      await upstream.close();
    }
  }, 150_000);

  it('a worker (APP_ROLE=worker) answers on its health port and stops on SIGTERM', async () => {
    const [port, healthPort] = [await freePort(), await freePort()];
    const spawned = npmStart({ APP_ROLE: 'worker', PORT: String(port), WORKER_HEALTH_PORT: String(healthPort) });
    const health = `http://127.0.0.1:${healthPort}`;
    await waitForHttp(`${health}/health`, spawned);
    const pid = await servicePid(spawned, 'worker started');
    expect(await isListening(port)).toBe(false);

    const ready = await fetch(`${health}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      info: { store: { status: 'up' }, queue: { status: 'up' }, index: { status: 'up' } },
    });
    const metrics = await fetch(`${health}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await metrics.text();
    expect(text).toContain('job_queue_jobs{job="workflow.run",state="waiting"} 0');
    expect(text).toContain('# TYPE process_resident_memory_bytes gauge');
    const missing = await fetch(`${health}/api/v1/collections`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      code: 'NOT_FOUND',
      message: 'No route for GET /api/v1/collections',
      requestId: missing.headers.get('x-request-id'),
    });

    spawned.child.kill('SIGTERM');

    await expectStoppedCleanly(spawned, pid, healthPort, 'SIGTERM');
  }, 150_000);
});

/** The status of a GET over a connection of its own (no pool, no keep-alive). */
function statusOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { 'x-api-key': KEY } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
