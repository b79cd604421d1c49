/**
 * The webhook's door alone: what `POST /api/v1/workflows/:id/runs` costs between the socket and
 * RunsService.start and after it returns (key check, validation, Fastify and Nest, the answer), the
 * run itself left out: RunsService.start is replaced by an answer at once (lib/stub-run-start.js).
 * CPU of the service's process per call, at 50 connections, for a webhook without and with `?wait=`
 * (the stub never waits), against the bare Fastify hello in the same run (CPU per request of it too).
 * CPU, not wall time: it moves little with the machine's load. BENCH_BEFORE_ROOT=<dir> (an earlier
 * build's dist/ and node_modules/) runs that build too, right before this one in every round.
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/webhook-door.bench.ts
 * BENCH_ROUNDS (3), BENCH_CALLS (6000 per load); BENCH_CPU_PROF=<dir> writes this build's --cpu-prof there.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { BENCH_KEY, cpuMicros, load, median, report, ServerProcess, startApp, startHelloServer } from './lib/bench-kit';

const BENCH = 'webhook-door';
const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_CALLS ?? 6000);
const STUB = join(__dirname, 'lib', 'stub-run-start.js');
const BODY = JSON.stringify({ input: { query: 'what is a vector', collection: 'col_1' } });
const HEADERS = { 'content-type': 'application/json', 'x-api-key': BENCH_KEY };
const load1 = () => loadavg()[0].toFixed(1);

/** CPU (µs) of the server's process per call of `path`, after a warm-up of the same size. */
async function cpuPerCall(server: ServerProcess, path: string, headers: Record<string, string>): Promise<number> {
  const options = { url: server.url, path, method: 'POST' as const, headers, body: BODY, connections: CONNECTIONS, durationMs: 600_000 };
  await load({ ...options, maxRequests: CALLS });
  const before = cpuMicros(server.child.pid!);
  const result = await load({ ...options, maxRequests: CALLS });
  const used = cpuMicros(server.child.pid!) - before;
  const expected = path.startsWith('/hello') ? 200 : 202;
  if (result.statuses[expected] !== result.requests) throw new Error(`${path}: statuses ${JSON.stringify(result.statuses)}`);
  return used / result.requests;
}

async function main() {
  const builds: [string, string | undefined][] = [['', undefined]];
  if (process.env.BENCH_BEFORE_ROOT) builds.unshift(['before_', process.env.BENCH_BEFORE_ROOT]);
  const figures: Record<string, number[]> = {};
  const add = (name: string, value: number) => (figures[name] ??= []).push(value);
  for (let round = 1; round <= ROUNDS; round++) {
    const hello = await startHelloServer();
    try {
      add('hello', await cpuPerCall(hello, '/hello', { 'content-type': 'application/json' }));
    } finally {
      await hello.stop();
    }
    for (const [prefix, root] of builds) {
      const prof = process.env.BENCH_CPU_PROF && !root ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
      const app = await startApp({ SWAGGER_ENABLED: 'false', RUNS_MAX_QUEUED: '0' }, ['-r', STUB, ...prof], root);
      try {
        add(`${prefix}webhook`, await cpuPerCall(app, '/api/v1/workflows/wf_door/runs', HEADERS));
        add(`${prefix}wait`, await cpuPerCall(app, '/api/v1/workflows/wf_door/runs?wait=10', HEADERS));
      } finally {
        await app.stop();
      }
    }
    console.log(
      `round ${round} (load ${load1()}): ${Object.entries(figures)
        .map(([k, v]) => `${k} ${v[v.length - 1].toFixed(1)} µs`)
        .join(', ')}`,
    );
  }
  const hello = median(figures.hello);
  for (const kind of ['webhook', 'wait']) {
    const after = median(figures[kind]);
    const before = figures[`before_${kind}`] ? median(figures[`before_${kind}`]) : undefined;
    report({
      bench: BENCH,
      metric: `${kind}_cpu_per_call`,
      value: after,
      unit: 'us',
      baseline: before ?? null,
      ratio: before ? after / before : null,
      target: `informational: the door alone (RunsService.start stubbed); Fastify hello ${hello.toFixed(1)} us per request (load ${load1()})`,
    });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
