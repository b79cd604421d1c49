/**
 * Every core on one machine (issue 27, section 1): completed runs/s of webhook -> set
 * - in the split layout (one APP_ROLE=api process and SPLIT_WORKERS APP_ROLE=worker processes on
 *   the same DATA_DIR) and with `npm start` on WORKERS processes (the default: one per core),
 *   each against one process (WORKERS=1), measured in the same run, alternating;
 * - in the split layout pinned to one core (`taskset -c 0`) against two (`taskset -c 0,1`);
 * and the p50 of `?wait` answered by the API process for runs that either process ran, against
 * one process alone;
 * - `?wait=10` of webhook -> set in the split layout, whose processes are not linked (no Redis):
 *   p50 and p99, one client at a time and WAIT_CLIENTS at once, and the service's CPU per run.
 * Each layout runs BENCH_WARM_RUNS (2 x BENCH_RUNS) runs before its measured window, so the figures
 * compare processes at work, not V8 compiling the run's path in each fresh process; the first
 * BENCH_RUNS of them are reported apart as `cold` (BENCH_WARM_RUNS=0: no warm-up, as before).
 * Targets: split >= 1.8x completed runs/s of one process; two cores >= 1.6x one core;
 * ?wait p50 within a few ms of one process.
 * BENCH_PARTS (comma-separated, all by default): `runs` (the completed runs/s figures), `wait`
 * (?wait with WORKERS), `split-wait`. BENCH_BEFORE_ROOT=<dir> (an earlier build's dist/ and a
 * node_modules/): `split-wait` runs that build too, in turn with this one in every round.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_KEY,
  benchPort,
  call,
  cpuMicros,
  figures,
  measureRuns,
  median,
  percentile,
  processTree,
  ServerProcess,
  startApp,
  startServer,
  tempDataDir,
  workersUp,
} from './lib/bench-kit';

const CONNECTIONS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
/** Runs each layout runs before its measured window, the first RUNS of them (at least those) measured as `cold` (0: none). */
const WARM_RUNS = Number(process.env.BENCH_WARM_RUNS ?? 2 * RUNS);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WAITS = Number(process.env.BENCH_WAITS ?? 200);
const WORKERS = Number(process.env.BENCH_WORKERS ?? availableParallelism());
const SPLIT_WORKERS = Number(process.env.BENCH_SPLIT_WORKERS ?? 2);
const WAIT_CLIENTS = Number(process.env.BENCH_WAIT_CLIENTS ?? 8);
const PARTS = (process.env.BENCH_PARTS ?? 'runs,wait,split-wait').split(',');
const ROOT = join(__dirname, '..', '..');

const definition = {
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    { id: 'shape', type: 'set', parameters: { fields: { done: true } } },
  ],
  edges: [{ from: 'trigger', to: 'shape' }],
};

const SETTINGS = {
  REDIS_URL: '',
  SWAGGER_ENABLED: 'false',
  RUNS_MAX_QUEUED: '0',
  RUNS_MAX_QUEUED_PER_WORKFLOW: '0',
  RUNS_MAX_QUEUED_PER_USER: '0',
};

/** Starts the service with `workers` processes and waits until all of them are up. */
async function start(workers: number): Promise<ServerProcess> {
  const app = await startApp({ ...SETTINGS, APP_ROLE: 'all', WORKERS: String(workers) });
  await workersUp(app);
  return app;
}

/** The split layout: one APP_ROLE=api process and SPLIT_WORKERS APP_ROLE=worker processes on its DATA_DIR, each up. */
async function startSplit(root = ROOT): Promise<ServerProcess> {
  const dataDir = tempDataDir();
  const api = await startApp({ ...SETTINGS, APP_ROLE: 'api', WORKERS: '1', DATA_DIR: dataDir }, [], root);
  const main = join(root, 'dist', 'src', 'main.js');
  const workers: ServerProcess[] = [];
  try {
    for (let i = 0; i < SPLIT_WORKERS; i++) {
      const port = benchPort();
      const env = { ...SETTINGS, APP_ROLE: 'worker', DATA_DIR: dataDir, BOOTSTRAP_API_KEY: BENCH_KEY, LOG_LEVEL: 'warn' };
      workers.push(await startServer(['--no-node-snapshot', main], { ...env, WORKER_HEALTH_PORT: String(port) }, port, '/health/ready'));
    }
  } catch (error) {
    await Promise.all([api, ...workers].map((p) => p.stop()));
    throw error;
  }
  return {
    url: api.url,
    child: api.child,
    pids: () => [api, ...workers].flatMap((p) => processTree(p.child.pid!)),
    stop: async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await api.stop();
    },
  } as ServerProcess & { pids(): number[] };
}

/** Pins every thread of every process of `app` (and so what they start later) to `cpus`, as `taskset -c` would. */
function pin(app: ServerProcess & { pids?(): number[] }, cpus: string): void {
  for (const pid of app.pids?.() ?? processTree(app.child.pid!))
    execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
}

/** Completed runs/s of one window of RUNS runs and the service's CPU per completed run over it. */
interface Window {
  runsPerSecond: number;
  cpuMsPerRun: number;
}

/**
 * Completed runs/s of `app` once warm, and where the CPU went meanwhile: the service's processes
 * against this bench's own (the load it sends shares the two cores), each in cores used on average.
 * A fresh process first compiles the path its runs take (V8 optimizes each hot function in every
 * process that runs it): in the first 3,000 runs of the split layout about a quarter of the
 * service's CPU was that compiling, by `perf` (0.3 ms a run, three processes each compiling its own
 * copy), a tenth after 3,000 more, 3% after 6,000. So the first RUNS runs are measured apart
 * (`cold`), WARM_RUNS in all run before the window measured, and the figures compare layouts at work.
 */
async function measured(label: string, app: ServerProcess & { pids?(): number[] }, cpu?: number[], cold?: Window[]): Promise<number> {
  try {
    if (WARM_RUNS > 0) {
      const first = await runWindow(`${label}, first ${RUNS} runs (cold)`, app, RUNS);
      cold?.push(first);
    }
    if (WARM_RUNS > RUNS) await runWindow(`${label}, warming up`, app, WARM_RUNS - RUNS);
    const warm = await runWindow(label, app, RUNS);
    cpu?.push(warm.cpuMsPerRun);
    return warm.runsPerSecond;
  } finally {
    await app.stop();
  }
}

async function runWindow(label: string, app: ServerProcess & { pids?(): number[] }, runs: number): Promise<Window> {
  const servicePids = () => app.pids?.() ?? processTree(app.child.pid!);
  const serviceMicros = () =>
    servicePids().reduce((sum, pid) => {
      try {
        return sum + cpuMicros(pid);
      } catch {
        return sum;
      }
    }, 0);
  const driverMicros = () => {
    const used = process.cpuUsage();
    return used.user + used.system;
  };
  let start = { at: 0, service: 0, driver: 0 };
  let cores = { service: 0, driver: 0 };
  const window = {
    open: () => void (start = { at: performance.now(), service: serviceMicros(), driver: driverMicros() }),
    close: () => {
      const wallMicros = (performance.now() - start.at) * 1000;
      cores = { service: (serviceMicros() - start.service) / wallMicros, driver: (driverMicros() - start.driver) / wallMicros };
    },
  };
  const result = await measureRuns(app.url, label, definition, {}, { runs, connections: CONNECTIONS, window });
  // CPU per run holds up better than runs/s on a shared machine, where the service gets what the others leave.
  const cpuMsPerRun = (cores.service * 1000) / result.runsPerSecond;
  console.log(
    `  cores used: service ${cores.service.toFixed(2)}, this bench (sending the load) ${cores.driver.toFixed(2)}; service CPU per completed run ${cpuMsPerRun.toFixed(2)} ms`,
  );
  return { runsPerSecond: result.runsPerSecond, cpuMsPerRun };
}

interface WaitLatency {
  p50: number;
  p99: number;
  /** CPU of all the service's processes per `?wait` run, over the calls measured. */
  cpuMs: number;
}

/**
 * `WAITS` calls of `?wait=10` to `app` (after 20 that warm up), `clients` at a time, each answered
 * when its run finished: p50, p99 and the service's CPU per call.
 */
async function waitCalls(app: ServerProcess & { pids?(): number[] }, clients: number): Promise<WaitLatency> {
  const workflow = await call(app.url, 'POST', '/api/v1/workflows', { name: `wait-${clients}`, definition });
  await call(app.url, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
  const once = async (): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${app.url}/api/v1/workflows/${workflow.id}/runs?wait=10`, {
      method: 'POST',
      headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
      body: '{"input":{}}',
    });
    const body = (await res.json()) as { status?: string };
    if (body.status !== 'succeeded') throw new Error(`?wait answered ${res.status} ${JSON.stringify(body)}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) await once();
  const serviceMicros = () =>
    (app.pids?.() ?? processTree(app.child.pid!)).reduce((sum, pid) => {
      try {
        return sum + cpuMicros(pid);
      } catch {
        return sum;
      }
    }, 0);
  const cpuBefore = serviceMicros();
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next++ < WAITS) latencies.push(await once());
    }),
  );
  const cpuMs = (serviceMicros() - cpuBefore) / 1000 / latencies.length;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuMs };
}

/** `?wait` one call at a time with `npm start` on `workers` processes. */
async function waitLatency(workers: number): Promise<WaitLatency> {
  const app = await start(workers);
  try {
    return await waitCalls(app, 1);
  } finally {
    await app.stop();
  }
}

/**
 * `?wait` in the split layout (not linked: no Redis), one client at a time and WAIT_CLIENTS at once,
 * each in a layout of its own; with BENCH_BEFORE_ROOT that build first, in turn, every round.
 */
async function splitWait(report: ReturnType<typeof figures>, load: () => string): Promise<void> {
  const builds: [string, string][] = [
    ...(process.env.BENCH_BEFORE_ROOT ? [['before', process.env.BENCH_BEFORE_ROOT] as [string, string]] : []),
    ['after', ROOT],
  ];
  const results = new Map<string, WaitLatency[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const clients of [1, WAIT_CLIENTS]) {
      for (const [build, root] of builds) {
        const app = await startSplit(root);
        try {
          const at = load();
          const result = await waitCalls(app, clients);
          console.log(
            `  split ?wait, ${build}, ${clients} client(s), round ${round + 1} (${at}): p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, service CPU ${result.cpuMs.toFixed(2)} ms per run`,
          );
          const key = `${build}:${clients}`;
          results.set(key, [...(results.get(key) ?? []), result]);
        } finally {
          await app.stop();
        }
      }
    }
  }
  for (const clients of [1, WAIT_CLIENTS]) {
    const of = (build: string, pick: (r: WaitLatency) => number) => {
      const rows = results.get(`${build}:${clients}`);
      return rows ? median(rows.map(pick)) : null;
    };
    for (const [metric, pick, unit] of [
      ['p50', (r: WaitLatency) => r.p50, 'ms'],
      ['p99', (r: WaitLatency) => r.p99, 'ms'],
      ['service CPU per run', (r: WaitLatency) => r.cpuMs, 'ms'],
    ] as const) {
      report(
        `split ?wait ${metric}, ${clients} client(s) at once`,
        of('after', pick)!,
        unit,
        of('before', pick),
        `median of ${ROUNDS} rounds; baseline: BENCH_BEFORE_ROOT's build in the same rounds, ${load()}`,
      );
    }
  }
}

async function main(): Promise<void> {
  const report = figures(
    'cores',
    `${RUNS} runs at ${CONNECTIONS} connections, ${WORKERS} processes on ${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)} at start`,
  );
  const one: number[] = [];
  const many: number[] = [];
  const split: number[] = [];
  const oneCore: number[] = [];
  const twoCores: number[] = [];
  const oneCpu: number[] = [];
  const splitCpu: number[] = [];
  const manyCpu: number[] = [];
  const oneCold: Window[] = [];
  const splitCold: Window[] = [];
  const load = () => `load ${loadavg()[0].toFixed(1)}`;
  for (let round = 0; PARTS.includes('runs') && round < ROUNDS; round++) {
    one.push(await measured(`WORKERS=1 (${load()})`, await start(1), oneCpu, oneCold));
    split.push(await measured(`split: 1 api + ${SPLIT_WORKERS} workers (${load()})`, await startSplit(), splitCpu, splitCold));
    many.push(await measured(`WORKERS=${WORKERS} (${load()})`, await start(WORKERS), manyCpu));
    for (const [cpus, into] of [
      ['0', oneCore],
      ['0,1', twoCores],
    ] as const) {
      const app = await startSplit();
      pin(app, cpus);
      into.push(await measured(`split, taskset -c ${cpus} (${load()})`, app));
    }
  }
  const best = (values: number[]) => Math.max(...values);
  if (PARTS.includes('runs')) reportRuns();
  if (PARTS.includes('wait')) {
    const alone = await waitLatency(1);
    const shared = await waitLatency(WORKERS);
    report(
      `?wait p50, WORKERS=${WORKERS}`,
      shared.p50,
      'ms',
      alone.p50,
      `within a few ms of WORKERS=1 (was 255 ms on Bull, 2 s embedded across processes), ${load()}`,
    );
    report(`?wait p99, WORKERS=${WORKERS}`, shared.p99, 'ms', alone.p99, 'reported');
  }
  if (PARTS.includes('split-wait')) await splitWait(report, load);
  console.log(
    `load after: ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );

  function reportRuns(): void {
    report(`completed runs/s, split 1 api + ${SPLIT_WORKERS} workers`, best(split), 'runs/s', best(one), `>= 1.8x WORKERS=1, ${load()}`);
    report(`completed runs/s, WORKERS=${WORKERS}`, best(many), 'runs/s', best(one), `>= 1.8x WORKERS=1, ${load()}`);
    report(
      `service CPU per completed run, split 1 api + ${SPLIT_WORKERS} workers`,
      Math.min(...splitCpu),
      'ms',
      Math.min(...oneCpu),
      `reported: what each run costs the machine, steadier than runs/s under load (${load()})`,
    );
    report(`service CPU per completed run, WORKERS=${WORKERS}`, Math.min(...manyCpu), 'ms', Math.min(...oneCpu), `reported (${load()})`);
    if (splitCold.length > 0) {
      // The first RUNS runs of fresh processes, as this bench measured before it warmed them up.
      report(
        `cold: completed runs/s of the first ${RUNS} runs, split 1 api + ${SPLIT_WORKERS} workers`,
        best(splitCold.map((w) => w.runsPerSecond)),
        'runs/s',
        best(oneCold.map((w) => w.runsPerSecond)),
        `reported: includes each process's compiling, ${load()}`,
      );
      report(
        `cold: service CPU per completed run of the first ${RUNS} runs, split 1 api + ${SPLIT_WORKERS} workers`,
        Math.min(...splitCold.map((w) => w.cpuMsPerRun)),
        'ms',
        Math.min(...oneCold.map((w) => w.cpuMsPerRun)),
        `reported: includes each process's compiling, ${load()}`,
      );
    }
    report('completed runs/s, split on taskset -c 0,1', best(twoCores), 'runs/s', best(oneCore), `>= 1.6x taskset -c 0, ${load()}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
