import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { bootService, freePort, jsonCaller, logLines, Spawned, stopService, tempDir } from '../utils/processes';

const root = join(__dirname, '..', '..');
const KEY = 'wcs_unknown_run_key_0123456789abcdef';
/** What the worker logs for a job whose run its store does not have (src/runs/run-worker.service.ts). */
const UNKNOWN_RUN = 'a job names a run this store does not have; leaving it to be retried';
/** Tries of a run's job (RUN_JOB_OPTIONS). */
const TRIES = 3;

/** The value of one sample of the exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * A job whose run the store never had is logged and left for the right process: failed as
 * retryable, so it is tried again (by a process that has the run, where several share a queue) and
 * kept among the failed jobs after its last try, never completed as if it had run. Here its run is
 * taken out of the store's file behind the service's back while its job waits in the queue. A job
 * whose run went with its workflow (deleted while the run waited) ends quietly as done instead. On
 * the built service in a process of its own.
 */
describe('a job for a run the store does not have', () => {
  let service: Spawned | undefined;
  let upstream: Server;
  let dataDir: string;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    upstream = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  }, 240_000);

  afterAll(async () => {
    await stopService(service);
    for (const res of held) res.end();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('is logged on each try and kept among the failed jobs, never marked done; one whose workflow was deleted ends quietly', async () => {
    dataDir = tempDir('unknown-run');
    const port = await freePort();
    // One process with one worker slot and one lane slot (for a user with nothing pending): two held runs fill both.
    service = await bootService(port, {
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: KEY,
      APP_ROLE: 'all',
      WORKERS: '1',
      JOB_CONCURRENCY: '1',
      REDIS_URL: '',
      EMBEDDING_THREADS: '1',
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
    });
    const base = `http://127.0.0.1:${port}`;
    const call = (method: string, path: string, body?: unknown, key = KEY) => jsonCaller(base, key)(method, path, body);
    const publish = async (name: string, node: unknown, key = KEY) => {
      const definition = {
        nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, node],
        edges: [{ from: 'trigger', to: (node as { id: string }).id }],
      };
      const created = await call('POST', '/api/v1/workflows', { name, definition }, key);
      expect((await call('POST', `/api/v1/workflows/${created.body.id}/publish`, undefined, key)).status).toBe(201);
      return created.body.id as string;
    };
    const start = async (workflowId: string, key = KEY) => {
      const started = await call('POST', `/api/v1/workflows/${workflowId}/runs`, { input: {} }, key);
      expect(started.status).toBe(202);
      return started.body.runId as string;
    };
    const until = async (what: string, done: () => Promise<boolean>) => {
      for (const deadline = Date.now() + 60_000; !(await done()); await new Promise((r) => setTimeout(r, 100)))
        if (Date.now() > deadline) throw new Error(`${what}, never came; the service said:\n${service!.output()}`);
    };

    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/held`;
    const holdingNode = { id: 'call', type: 'http-request', parameters: { method: 'GET', url: upstreamUrl } };
    const other = (await call('POST', '/api/v1/users', { name: 'other' })).body.apiKey.key as string;
    // Each user's first run: whichever slot one takes, the other takes the other.
    const holders = [
      { key: KEY, runId: await start(await publish('holds a worker', holdingNode)) },
      { key: other, runId: await start(await publish('holds the other', holdingNode, other), other) },
    ];
    await until('both held runs calling the upstream', async () => held.length === 2);
    const shaping = { id: 'shape', type: 'set', parameters: { fields: { done: 'yes' } } };
    // Their user has a run pending, so they are not the lane's: they wait for the worker's slot.
    const orphan = await start(await publish('its run taken out of the store', shaping));
    const gone = await publish('deleted while its run waits', shaping);
    const deleted = await start(gone);
    for (const runId of [orphan, deleted]) expect((await call('GET', `/api/v1/runs/${runId}`)).body.status).toBe('queued');

    const db = new Database(join(dataDir, 'service.db'));
    try {
      db.pragma('busy_timeout = 10000');
      expect(db.prepare('DELETE FROM workflow_runs WHERE id = ?').run(orphan).changes).toBe(1);
      // Its job now names a workflow of another store too (a run of a workflow this store has, gone, was pruned here).
      const renamed = db.prepare("UPDATE jobs SET data = json_set(data, '$.workflowId', 'wfl_of_another_store') WHERE id = ?").run(orphan);
      expect(renamed.changes).toBe(1);
    } finally {
      db.close();
    }
    expect((await call('DELETE', `/api/v1/workflows/${gone}`)).status).toBe(204);
    for (const runId of [orphan, deleted]) expect((await call('GET', `/api/v1/runs/${runId}`)).status).toBe(404);
    for (const res of held.splice(0)) res.end('{}');
    for (const { key, runId } of holders)
      await until(
        `run ${runId} succeeded`,
        async () => (await call('GET', `/api/v1/runs/${runId}`, undefined, key)).body.status === 'succeeded',
      );

    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    const logged = (runId = orphan) => logLines(service!.output()).filter((line) => line.msg === UNKNOWN_RUN && line.runId === runId);
    await until(`the orphan's job failed after ${TRIES} tries`, async () => {
      return sample(await scrape(), 'job_queue_jobs{job="workflow.run",state="failed"}') === 1 && logged().length === TRIES;
    });
    const text = await scrape();
    for (const state of ['waiting', 'delayed', 'active'])
      expect(sample(text, `job_queue_jobs{job="workflow.run",state="${state}"}`)).toBe(0);
    expect(logged()).toHaveLength(TRIES);
    expect(logged()[0]).toMatchObject({ level: 40, jobId: expect.any(String) });
    // The deleted workflow's job is neither pending nor failed (the one failed job is the orphan's), and was never warned about.
    expect(sample(text, 'job_queue_jobs{job="workflow.run",state="failed"}')).toBe(1);
    expect(logged(deleted)).toHaveLength(0);
  }, 240_000);
});
