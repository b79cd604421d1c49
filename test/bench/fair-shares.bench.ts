/**
 * Fair shares between users (issue 26, section 2). One process (APP_ROLE=all, default
 * JOB_CONCURRENCY and EXPRESSION_POOL_SIZE). User B's trivial run (webhook -> a Code node
 * returning its input) is timed from the webhook call to its record (`?wait=`), 50 times one after
 * another: first on an idle service (the baseline), then while user A keeps 200 slow runs
 * (http-request to a local server answering after SLOW_MS) and 60 CPU-bound Code runs (a busy loop
 * of BUSY_MS) queued, topped up as they drain. Target: B's p95 under load <= 2 x its idle p95.
 * Also reported: how many of A's runs completed meanwhile (A is served too, not starved).
 *
 * On the embedded queue, and on Bull when Redis answers (BENCH_QUEUES=embedded,bull picks).
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { testRedis } from '../utils/workflows-fixtures';
import { call, figures, percentile, startApp } from './lib/bench-kit';

const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const SLOW_RUNS = 200;
const CPU_RUNS = 60;
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 1000);
const BUSY_MS = Number(process.env.BENCH_BUSY_MS ?? 300);
const QUEUES = (process.env.BENCH_QUEUES ?? 'embedded,bull').split(',');
/** A's top-up posts this many at once. */
const FILL_AT_ONCE = 20;
/** How long A's backlog may take to reach half its size before the bench gives up (it once waited forever). */
const FILL_DEADLINE_MS = 120_000;

function slowServer(): Promise<Server> {
  const server = createServer((req, res) => {
    setTimeout(() => res.end('{"ok":true}'), SLOW_MS).unref();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function as(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function workflow(url: string, key: string, name: string, nodes: unknown[]): Promise<string> {
  const trigger = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
  const definition = { nodes: [trigger, ...nodes], edges: [{ from: 'trigger', to: (nodes[0] as { id: string }).id }] };
  const created = await as(url, key, 'POST', '/api/v1/workflows', { name, definition });
  if (created.status !== 201) throw new Error(`workflow ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.id;
}

/** B's latencies: RUNS runs one after another, each timed from the call to its finished record. */
async function latencies(url: string, key: string, workflowId: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const answer = await as(url, key, 'POST', `/api/v1/workflows/${workflowId}/runs?wait=30`, { runType: 'test', input: { i } });
    if (answer.status !== 200 || answer.body.status !== 'succeeded')
      throw new Error(`B's run: ${answer.status} ${JSON.stringify(answer.body)}`);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

async function measure(queueName: string): Promise<void> {
  // One process, as measured: WORKERS defaults to one process per core.
  const env: Record<string, string> = { FETCH_ALLOWED_HOSTS: '127.0.0.1', RUNS_REFUSAL_DELAY_MS: '0', WORKERS: '1' };
  const redis = queueName === 'bull' ? await testRedis('fair-bench') : null;
  if (queueName === 'bull') {
    if (!redis) return void process.stderr.write('fair-shares: Redis is not reachable; Bull not measured\n');
    Object.assign(env, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });
  }
  const upstream = await slowServer();
  const app = await startApp(env);
  try {
    const userOf = async (name: string) => (await call(app.url, 'POST', '/api/v1/users', { name })).apiKey.key as string;
    const [a, b] = [await userOf('heavy'), await userOf('light')];
    const slowUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/slow`;
    const slow = await workflow(app.url, a, 'a-slow', [{ id: 'slow', type: 'http-request', parameters: { method: 'GET', url: slowUrl } }]);
    const busy = await workflow(app.url, a, 'a-busy', [
      {
        id: 'busy',
        type: 'code',
        parameters: { code: `const end = Date.now() + ${BUSY_MS}; let n = 0; while (Date.now() < end) n++; return { n };` },
      },
    ]);
    const trivial = await workflow(app.url, b, 'b-trivial', [{ id: 'echo', type: 'code', parameters: { code: 'return input;' } }]);

    const say = (what: string) => process.stderr.write(`fair-shares ${queueName}: ${what} (load ${loadavg()[0].toFixed(1)})\n`);
    await latencies(app.url, b, trivial); // warm-up: plans compiled, sandbox processes started
    say('warmed up; timing B alone');
    const idle = await latencies(app.url, b, trivial);
    const loadIdle = loadavg()[0];

    // A's backlog, kept at its size: every run of A's that finishes is replaced.
    const queued = async (workflowId: string) =>
      (await as(app.url, a, 'GET', `/api/v1/runs?workflowId=${workflowId}&status=queued&limit=1`)).body.total as number;
    // A post that fails (a connection reset under load) is left to the next top-up: it must not end the bench.
    const post = (workflowId: string) =>
      as(app.url, a, 'POST', `/api/v1/workflows/${workflowId}/runs`, { runType: 'test', input: {} }).catch((error: unknown) => {
        failedPosts.push(String(error instanceof Error ? (error.cause ?? error.message) : error));
        return { status: 0, body: undefined };
      });
    const failedPosts: string[] = [];
    let topping = true;
    let postedByA = 0;
    const topUp = async () => {
      while (topping) {
        for (const [workflowId, size] of [
          [slow, SLOW_RUNS],
          [busy, CPU_RUNS],
        ] as const) {
          // Posted FILL_AT_ONCE at a time: one after another, the posts fell behind what the
          // workers drained (on Bull an enqueue is several Redis round trips), the backlog never
          // reached its size and the bench waited for it forever.
          for (let missing = size - (await queued(workflowId)); missing > 0 && topping; missing -= FILL_AT_ONCE) {
            const answers = await Promise.all(Array.from({ length: Math.min(missing, FILL_AT_ONCE) }, () => post(workflowId)));
            postedByA += answers.filter((answer) => answer.status === 202).length;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    // Caught at once: a failing top-up must not end the process before B's figures or error are out.
    let fillError: unknown;
    const filling = topUp().catch((error: unknown) => void (fillError = error));
    say(`filling A's backlog (${SLOW_RUNS} slow, ${CPU_RUNS} busy)`);
    for (const deadline = Date.now() + FILL_DEADLINE_MS; (await queued(slow)) < SLOW_RUNS / 2 || (await queued(busy)) < CPU_RUNS / 2;) {
      if (Date.now() > deadline)
        throw new Error(
          `A's backlog did not build up: ${await queued(slow)} slow, ${await queued(busy)} busy queued (posted ${postedByA})`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
    say(`A's backlog is up; timing B beside it`);
    let underLoad: number[];
    try {
      underLoad = await latencies(app.url, b, trivial);
    } finally {
      topping = false;
      await filling;
    }
    if (fillError) throw fillError;
    const loadBusy = loadavg()[0];
    const backlog = { slow: await queued(slow), busy: await queued(busy) };

    const where = `${queueName} queue, ${RUNS} runs, A keeping ${SLOW_RUNS} slow (${SLOW_MS} ms) and ${CPU_RUNS} CPU-bound (${BUSY_MS} ms) runs queued; load ${loadIdle.toFixed(1)} idle, ${loadBusy.toFixed(1)} busy on ${cpus().length} cores`;
    const figure = figures('fair-shares', where);
    const [idleP95, busyP95] = [percentile(idle, 95), percentile(underLoad, 95)];
    figure('b-idle-p95', idleP95, 'ms', null, 'baseline: B alone');
    figure('b-idle-p50', percentile(idle, 50), 'ms', null, 'baseline: B alone');
    figure('b-under-a-p95', busyP95, 'ms', idleP95, '<= 2 x idle p95');
    figure('b-under-a-p50', percentile(underLoad, 50), 'ms', percentile(idle, 50), 'informative');
    figure(
      'a-posted-while-b-measured',
      postedByA,
      'runs',
      null,
      `A's backlog left: ${backlog.slow} slow, ${backlog.busy} busy; ${failedPosts.length} of A's posts failed${failedPosts.length ? ` (${failedPosts[0]})` : ''}`,
    );
  } finally {
    await app.stop();
    upstream.close();
    upstream.closeAllConnections();
    await redis?.cleanup();
  }
}

async function main(): Promise<void> {
  for (const queueName of QUEUES) await measure(queueName);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});
