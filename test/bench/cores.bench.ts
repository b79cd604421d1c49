/**
 * Every core on one machine (issue 27, section 1): completed runs/s of webhook -> set with
 * `npm start` on WORKERS processes (the default: one per core) against one process (WORKERS=1),
 * measured in the same run, alternating; and the p50 of `?wait` answered by the API process for
 * runs that either process ran, against one process alone.
 * Targets: >= 1.8x completed runs/s of one process; ?wait p50 within a few ms of one process.
 */
import { availableParallelism } from 'node:os';
import { call, BENCH_KEY, figures, measureRuns, percentile, startApp } from './lib/bench-kit';

const CONNECTIONS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WAITS = Number(process.env.BENCH_WAITS ?? 200);
const WORKERS = Number(process.env.BENCH_WORKERS ?? availableParallelism());

const definition = {
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    { id: 'shape', type: 'set', parameters: { fields: { done: true } } },
  ],
  edges: [{ from: 'trigger', to: 'shape' }],
};

/** Starts the service with `workers` processes and waits until all of them are up. */
async function start(workers: number) {
  const app = await startApp({ APP_ROLE: 'all', WORKERS: String(workers), REDIS_URL: '', SWAGGER_ENABLED: 'false' });
  for (const deadline = Date.now() + 120_000; workers > 1; await new Promise((r) => setTimeout(r, 200))) {
    const ready = (await (await fetch(`${app.url}/health/ready`)).json()) as { details?: { workers?: { processes?: number } } };
    if (ready.details?.workers?.processes === workers) break;
    if (Date.now() > deadline) throw new Error(`only ${JSON.stringify(ready.details?.workers)} worker processes came up`);
  }
  return app;
}

async function throughput(workers: number): Promise<number> {
  const app = await start(workers);
  try {
    return (await measureRuns(app.url, `workers=${workers}`, definition, {}, { runs: RUNS, connections: CONNECTIONS })).runsPerSecond;
  } finally {
    await app.stop();
  }
}

/** p50 and p99 of sequential `?wait` calls, each answered when its run finished. */
async function waitLatency(workers: number): Promise<{ p50: number; p99: number }> {
  const app = await start(workers);
  try {
    const workflow = await call(app.url, 'POST', '/api/v1/workflows', { name: `wait-${workers}`, definition });
    await call(app.url, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
    const latencies: number[] = [];
    for (let i = 0; i < WAITS + 20; i++) {
      const started = performance.now();
      const res = await fetch(`${app.url}/api/v1/workflows/${workflow.id}/runs?wait=10`, {
        method: 'POST',
        headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
        body: '{"input":{}}',
      });
      const body = (await res.json()) as { status?: string };
      if (body.status !== 'succeeded') throw new Error(`?wait answered ${res.status} ${JSON.stringify(body)}`);
      // The first 20 warm up.
      if (i >= 20) latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  } finally {
    await app.stop();
  }
}

async function main(): Promise<void> {
  const { loadavg } = await import('node:os');
  const report = figures(
    'cores',
    `${RUNS} runs at ${CONNECTIONS} connections, ${WORKERS} processes on ${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)} at start`,
  );
  const one: number[] = [];
  const many: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    one.push(await throughput(1));
    many.push(await throughput(WORKERS));
  }
  const best = (values: number[]) => Math.max(...values);
  report(`completed runs/s, WORKERS=${WORKERS}`, best(many), 'runs/s', best(one), '>= 1.8x WORKERS=1');
  const alone = await waitLatency(1);
  const shared = await waitLatency(WORKERS);
  report(
    `?wait p50, WORKERS=${WORKERS}`,
    shared.p50,
    'ms',
    alone.p50,
    'within a few ms of WORKERS=1 (was 255 ms on Bull, 2 s embedded across processes)',
  );
  report(`?wait p99, WORKERS=${WORKERS}`, shared.p99, 'ms', alone.p99, 'reported');
  console.log(
    `load after: ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
