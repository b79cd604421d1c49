/**
 * Issue 27 (2): what one run costs in one process. The app runs as one process (APP_ROLE=all,
 * embedded store and queue, default settings); each round first measures the bare Fastify hello
 * server (POST /hello, the baseline; also the http-request target) and then, on the app:
 * The queued-run limits are off (a backlog is what the rounds measure, not refusals).
 * (a) webhook -> set and (b) webhook -> if -> set -> http-request: RUNS webhooks at 50 connections,
 *     the clock stopping when the last run has finished: completed runs/s while accepting, and the
 *     CPU the service's processes used over that span per completed run;
 * (c) (b) with `?wait=10` (answer once the run finished): req/s, p99 and CPU per run.
 * RSS is the peak of all the service's processes together over every round. Rounds alternate
 * baseline and app; each figure is the median round, each ratio the median of the rounds' ratios.
 * Targets (issue 27): (a) >= 1,600 runs/s, >= 0.11 of Fastify, <= 0.35 ms CPU per run;
 * (b) >= 1,400 runs/s, <= 0.6 ms; (c) >= 1,200 req/s, p99 <= 100 ms; RSS <= 600 MB.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/runs-cpu.bench.ts
 * BENCH_CPU_PROF=<dir> starts the app with --cpu-prof, its profile written there when it stops.
 */
import { loadavg } from 'node:os';
import {
  BENCH_KEY,
  call,
  cpuMicros,
  load,
  LoadResult,
  measureRuns,
  report,
  rssBytes,
  startApp,
  startHelloServer,
  treeSum,
} from './lib/bench-kit';
import { branching, webhookSet } from './lib/run-workflows';

const BENCH = 'runs-cpu';
const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const BASELINE_MS = 3000;
const WAIT_MS = 4000;
const INPUT = { query: 'what is a vector', collection: 'col_1' };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const load1 = () => loadavg()[0].toFixed(1);

/** CPU (ms) the app's processes used between open and close, and the peak of their RSS meanwhile. */
function meter(pid: number) {
  let cpu = 0;
  let sampler: NodeJS.Timeout | undefined;
  const sample = { cpuMs: 0, peakRss: 0 };
  return {
    sample,
    open() {
      cpu = treeSum(pid, cpuMicros);
      sampler = setInterval(() => (sample.peakRss = Math.max(sample.peakRss, treeSum(pid, rssBytes))), 200);
    },
    close() {
      clearInterval(sampler);
      sample.cpuMs = (treeSum(pid, cpuMicros) - cpu) / 1000;
      sample.peakRss = Math.max(sample.peakRss, treeSum(pid, rssBytes));
    },
  };
}

interface Round {
  hello: number;
  setRuns: number;
  setCpu: number;
  branchRuns: number;
  branchCpu: number;
  waitRps: number;
  waitP99: number;
  waitCpu: number;
}

async function main() {
  const hello = await startHelloServer();
  const profileDir = process.env.BENCH_CPU_PROF;
  const app = await startApp(
    // Default settings, but for the queued-run limits: the accept rate outruns the workers, and the
    // backlog a round leaves is what it measures, not a refusal.
    {
      APP_ROLE: 'all',
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      SWAGGER_ENABLED: 'false',
      RUNS_MAX_QUEUED: '0',
      RUNS_MAX_QUEUED_PER_WORKFLOW: '0',
    },
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  const pid = app.child.pid!;
  const rounds: Round[] = [];
  let peakRss = 0;
  try {
    // The ?wait workflow, published once; its first run warms it.
    const waited = await call(app.url, 'POST', '/api/v1/workflows', { name: 'wait', definition: branching(hello.url) });
    await call(app.url, 'POST', `/api/v1/workflows/${waited.id}/publish`);
    const waitLoad = (durationMs: number): Promise<LoadResult> =>
      load({
        url: app.url,
        path: `/api/v1/workflows/${waited.id}/runs?wait=10`,
        method: 'POST',
        headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ input: INPUT }),
        connections: CONNECTIONS,
        durationMs,
      });

    for (let round = 1; round <= ROUNDS; round++) {
      const baseline = await load({
        url: hello.url,
        path: '/hello',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: INPUT }),
        connections: CONNECTIONS,
        durationMs: BASELINE_MS,
        warmupMs: 500,
      });
      console.log(`round ${round} (load ${load1()}): bare Fastify POST ${baseline.rps.toFixed(0)} req/s`);

      const measured = async (label: string, definition: unknown) => {
        const m = meter(pid);
        const runs = await measureRuns(app.url, label, definition, INPUT, { runs: RUNS, connections: CONNECTIONS, window: m });
        if (runs.failed) throw new Error(`${label}: ${runs.failed} runs failed`);
        peakRss = Math.max(peakRss, m.sample.peakRss);
        const cpuPerRun = m.sample.cpuMs / RUNS;
        console.log(
          `  ${label}: ${cpuPerRun.toFixed(3)} ms CPU per run, peak RSS ${(m.sample.peakRss / 2 ** 20).toFixed(0)} MB (load ${load1()})`,
        );
        return { rps: runs.runsPerSecond, cpuPerRun };
      };
      const set = await measured(`webhook -> set, round ${round}`, webhookSet());
      const branch = await measured(`webhook -> if -> set -> http-request, round ${round}`, branching(hello.url));

      await waitLoad(500);
      const m = meter(pid);
      m.open();
      const wait = await waitLoad(WAIT_MS);
      m.close();
      peakRss = Math.max(peakRss, m.sample.peakRss);
      if (wait.statuses[200] !== wait.requests) throw new Error(`?wait: answers ${JSON.stringify(wait.statuses)}, errors ${wait.errors}`);
      const waitCpu = m.sample.cpuMs / wait.requests;
      console.log(
        `  ?wait=10: ${wait.rps.toFixed(0)} req/s, p50 ${wait.p50Ms.toFixed(1)} ms, p99 ${wait.p99Ms.toFixed(1)} ms, ` +
          `${waitCpu.toFixed(3)} ms CPU per run (load ${load1()})`,
      );
      rounds.push({
        hello: baseline.rps,
        setRuns: set.rps,
        setCpu: set.cpuPerRun,
        branchRuns: branch.rps,
        branchCpu: branch.cpuPerRun,
        waitRps: wait.rps,
        waitP99: wait.p99Ms,
        waitCpu,
      });
    }
  } finally {
    await app.stop();
    await hello.stop();
  }

  const mid = (pick: (r: Round) => number) => median(rounds.map(pick));
  const perHello = (pick: (r: Round) => number) => median(rounds.map((r) => pick(r) / r.hello));
  const figure = (metric: string, value: number, unit: string, baseline: number | null, ratio: number | null, target: string) =>
    report({ bench: BENCH, metric, value, unit, baseline, ratio, target: `${target} (load ${load1()})` });
  const hellos = mid((r) => r.hello);
  figure('fastify_hello_rps', hellos, 'req/s', null, null, 'the baseline');
  figure(
    'set_completed_runs_per_s',
    mid((r) => r.setRuns),
    'runs/s',
    hellos,
    perHello((r) => r.setRuns),
    '>= 1600 runs/s, ratio >= 0.11',
  );
  figure(
    'set_cpu_per_run',
    mid((r) => r.setCpu),
    'ms',
    null,
    null,
    '<= 0.35 ms',
  );
  figure(
    'branching_completed_runs_per_s',
    mid((r) => r.branchRuns),
    'runs/s',
    hellos,
    perHello((r) => r.branchRuns),
    '>= 1400 runs/s',
  );
  figure(
    'branching_cpu_per_run',
    mid((r) => r.branchCpu),
    'ms',
    null,
    null,
    '<= 0.6 ms',
  );
  figure(
    'branching_wait_rps',
    mid((r) => r.waitRps),
    'req/s',
    hellos,
    perHello((r) => r.waitRps),
    '>= 1200 req/s',
  );
  figure(
    'branching_wait_p99',
    mid((r) => r.waitP99),
    'ms',
    null,
    null,
    '<= 100 ms',
  );
  figure(
    'branching_wait_cpu_per_run',
    mid((r) => r.waitCpu),
    'ms',
    null,
    null,
    'informational',
  );
  figure('rss_peak', peakRss / 2 ** 20, 'MB', null, null, '<= 600 MB, all the service processes');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
