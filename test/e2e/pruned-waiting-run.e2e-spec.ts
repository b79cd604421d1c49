import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bootService, freePort, jsonCaller, logLines, Spawned, stopService, tempDir } from '../utils/processes';

const root = join(__dirname, '..', '..');
const KEY = 'wcs_pruned_wait_key_0123456789abcdef';
/** What the worker logs for a job whose run its store does not have (src/runs/run-worker.service.ts). */
const UNKNOWN_RUN = 'a job names a run this store does not have; leaving it to be retried';
/** Long enough for two runs, their cancels and a restart before the first resume job comes due. */
const WAIT_SECONDS = 40;

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * A run canceled while it waits keeps its delayed resume job; pruned (RUNS_MAX_PER_WORKFLOW) before
 * that job comes due, its run is gone. The job is one of this store's (its workflow is), so it ends
 * quietly: no warning about another store's run, no failed job. On the built service, restarted so
 * that the pruner's pass at boot removes the run.
 */
describe('the resume job of a waiting run canceled and pruned before it comes due', () => {
  let service: Spawned | undefined;
  let dataDir: string;
  const outputs: string[] = [];

  beforeAll(() => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
  }, 240_000);

  afterAll(async () => {
    await stopService(service);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends quietly, neither warned about nor failed', async () => {
    dataDir = tempDir('pruned-wait');
    const port = await freePort();
    const env = {
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: KEY,
      APP_ROLE: 'all',
      WORKERS: '1',
      REDIS_URL: '',
      EMBEDDING_THREADS: '1',
      RUNS_MAX_PER_WORKFLOW: '1',
    };
    service = await bootService(port, env);
    const base = `http://127.0.0.1:${port}`;
    const call = jsonCaller(base, KEY);
    const until = async (what: string, done: () => Promise<boolean>) => {
      for (const deadline = Date.now() + 120_000; !(await done()); await new Promise((r) => setTimeout(r, 200)))
        if (Date.now() > deadline) throw new Error(`${what}, never came; the service said:\n${outputs.join('')}${service!.output()}`);
    };
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'pause', type: 'wait', parameters: { amount: WAIT_SECONDS, unit: 'seconds' } },
      ],
      edges: [{ from: 'trigger', to: 'pause' }],
    };
    const workflowId = (await call('POST', '/api/v1/workflows', { name: 'waits', definition })).body.id as string;
    expect((await call('POST', `/api/v1/workflows/${workflowId}/publish`)).status).toBe(201);
    /** A run parked at its wait under a delayed resume job, then canceled. */
    const canceledAtWait = async () => {
      const started = await call('POST', `/api/v1/workflows/${workflowId}/runs`, { input: {} });
      expect(started.status).toBe(202);
      const runId = started.body.runId as string;
      await until(`run ${runId} waiting`, async () => (await call('GET', `/api/v1/runs/${runId}`)).body.status === 'waiting');
      expect((await call('POST', `/api/v1/runs/${runId}/cancel`)).status).toBe(200);
      await until(`run ${runId} canceled`, async () => (await call('GET', `/api/v1/runs/${runId}`)).body.status === 'canceled');
      return runId;
    };
    const pruned = await canceledAtWait();
    const kept = await canceledAtWait();

    // The pruner's pass at boot keeps the newest finished run of the workflow.
    await stopService(service);
    outputs.push(service.output());
    service = await bootService(port, env);
    await until(`run ${pruned} pruned`, async () => (await call('GET', `/api/v1/runs/${pruned}`)).status === 404);
    expect((await call('GET', `/api/v1/runs/${kept}`)).body.status).toBe('canceled');

    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    await until('both resume jobs done with', async () => {
      const text = await scrape();
      return ['waiting', 'delayed', 'active'].every((state) => sample(text, `job_queue_jobs{job="workflow.run",state="${state}"}`) === 0);
    });
    expect(sample(await scrape(), 'job_queue_jobs{job="workflow.run",state="failed"}')).toBe(0);
    expect(logLines(service.output()).filter((line) => line.msg === UNKNOWN_RUN)).toEqual([]);
  }, 300_000);
});
