/**
 * Issue 27 (2): what one run costs, in one process and in the default layout. The app runs as one
 * process (APP_ROLE=all, WORKERS=1, embedded store and queue, default settings; layout `one`) and as
 * `npm start` runs it (WORKERS unset: one process per core, the first serving the API; layout
 * `default`, its figures prefixed `default_`); each round first measures the bare Fastify hello
 * server (POST /hello, the baseline; also the http-request target) and then, on each app in turn:
 * The queued-run limits are off (a backlog is what the rounds measure, not refusals).
 * (a) webhook -> set and (b) webhook -> if -> set -> http-request: RUNS webhooks at 50 connections,
 *     the clock stopping when the last run has finished: completed runs/s while accepting, and the
 *     CPU the service's processes used over that span per completed run;
 * (c) (b) with `?wait=10` (answer once the run finished): req/s, p99 and CPU per run; then again
 *     from FEW_CALLERS callers, fewer than the worker's slots, so that each run finds a slot free.
 * Each also counts the SQLite commits per run (per call with `?wait`) of all the service's processes:
 * they start with the count-commits.js preload, as in the commits bench; a count does not move with
 * the machine's load. In the default layout it also counts the BEGINs that found the write lock held
 * by another of its processes (`lock_busy`). CPU per run is that of all the service's processes (the default layout's worker
 * processes too); this bench's own CPU per run is reported beside it (`bench_cpu_per_run`), as the
 * load it sends takes the same cores; each window's log line gives the cores the service (its first
 * process apart) and this bench used. RSS is the peak of all the service's processes together over
 * every round. Rounds alternate baseline and apps; each figure is the median round, each ratio the
 * median of the rounds' ratios.
 * BENCH_WARM_ROUNDS (1) rounds of each build run first and are reported apart as `cold_` figures:
 * in a fresh process V8 is still compiling the run's path (a quarter of the CPU of the first 3,000
 * runs; see the cores bench), so measured rounds are what a service at work spends
 * (BENCH_WARM_ROUNDS=0: every round measured from the start, as before).
 * Targets (issue 27): (a) >= 1,600 runs/s, >= 0.11 of Fastify, <= 0.35 ms CPU per run;
 * (b) >= 1,400 runs/s, <= 0.6 ms; (c) >= 1,200 req/s, p99 <= 100 ms; RSS <= 600 MB.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/runs-cpu.bench.ts
 * BENCH_LAYOUTS (comma-separated, `one,default` by default): which layouts to measure.
 * BENCH_TRY_ENV=KEY=value,... measures a candidate default: the default layout with those settings,
 * its turn right after the default layout's in every round (`try_` figures, and `try_*_vs_default`);
 * the services log at `info` unless it sets LOG_LEVEL (a try of `LOG_LEVEL=warn` weighs the log lines);
 * BENCH_TRY_NODE_OPTIONS (space-separated, e.g. `--max-semi-space-size=32`) does the same for options
 * of `node` itself, which its worker processes inherit (alone or with BENCH_TRY_ENV).
 * BENCH_CPU_PROF=<dir> starts the app with --cpu-prof, its profile written there when it stops;
 * `node test/bench/lib/cpuprofile-summary.js <file>` lists its top frames (self, by file, inclusive).
 * BENCH_BEFORE_ROOT=<dir> (a directory with an earlier build's dist/ and a node_modules/) runs that
 * build too, in each layout, its turn right before this one's in every round: before/after figures
 * (prefixed `before_` and `before_default_`, and `*_after_vs_before`) under the same load.
 */
import { loadavg } from 'node:os';
import {
  BENCH_KEY,
  call,
  cpuMicros,
  load,
  LoadResult,
  measureRuns,
  median,
  ownCpuMicros,
  report,
  rssBytes,
  ServerProcess,
  startApp,
  startHelloServer,
  treeSum,
  workersUp,
} from './lib/bench-kit';
import { commitCounter } from './lib/commit-count';
import { branching, DEFAULT_LAYOUT_RUNS_ENV, ONE_PROCESS_RUNS_ENV, webhookSet } from './lib/run-workflows';

const BENCH = 'runs-cpu';
const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 1);
const BASELINE_MS = 3000;
const WAIT_MS = 4000;
/** Callers of the second `?wait` load: fewer than the worker's slots (4 and one per waiting caller, up to 12 more). */
const FEW_CALLERS = 8;
const INPUT = { query: 'what is a vector', collection: 'col_1' };
/** `one`: the service in one process (WORKERS=1); `default`: as `npm start` runs it (one process per core). */
const LAYOUTS = (process.env.BENCH_LAYOUTS ?? 'one,default').split(',');
/** Settings (`KEY=value,KEY=value`) of a candidate default: the default layout with them, in turn right after it. */
const TRY_ENV = Object.fromEntries(
  (process.env.BENCH_TRY_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      // Cut at the first '=' only: a value may hold more (NODE_OPTIONS=--max-semi-space-size=32).
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`BENCH_TRY_ENV: "${pair}" is not KEY=value`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
);

/** Options of `node` (space-separated) for the candidate: its worker processes inherit them. */
const TRY_NODE_OPTIONS = (process.env.BENCH_TRY_NODE_OPTIONS ?? '').split(' ').filter(Boolean);

const load1 = () => loadavg()[0].toFixed(1);

/**
 * CPU (ms) the app's processes used between open and close, and the peak of their RSS meanwhile;
 * also this bench's own CPU, which sends the load from the same cores, and the cores each used.
 */
function meter(pid: number) {
  let cpu = 0;
  let firstCpu = 0;
  let benchCpu = 0;
  let at = 0;
  let sampler: NodeJS.Timeout | undefined;
  const sample = { cpuMs: 0, benchCpuMs: 0, peakRss: 0, cores: '' };
  return {
    sample,
    open() {
      cpu = treeSum(pid, cpuMicros);
      firstCpu = cpuMicros(pid);
      benchCpu = ownCpuMicros();
      at = performance.now();
      sampler = setInterval(() => (sample.peakRss = Math.max(sample.peakRss, treeSum(pid, rssBytes))), 200);
    },
    close() {
      clearInterval(sampler);
      sample.cpuMs = (treeSum(pid, cpuMicros) - cpu) / 1000;
      sample.benchCpuMs = (ownCpuMicros() - benchCpu) / 1000;
      sample.peakRss = Math.max(sample.peakRss, treeSum(pid, rssBytes));
      const wallMs = performance.now() - at;
      const cores = (ms: number) => (ms / wallMs).toFixed(2);
      // The first process (the API's, in the default layout) apart from its worker processes.
      const first = (cpuMicros(pid) - firstCpu) / 1000;
      sample.cores = `cores used: service ${cores(sample.cpuMs)} (first process ${cores(first)}), this bench ${cores(sample.benchCpuMs)}`;
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
  setBenchCpu: number;
  branchBenchCpu: number;
  waitBenchCpu: number;
  setCommits: number;
  branchCommits: number;
  waitCommits: number;
  setBusy: number;
  branchBusy: number;
  waitBusy: number;
  fewRps: number;
  fewP99: number;
  fewCpu: number;
  fewCommits: number;
}

/** One build of the service under test, its ?wait workflow published, and what its rounds measured. */
interface Subject {
  prefix: string;
  app: ServerProcess;
  waitPath: string;
  rounds: Round[];
  /** The warm-up rounds (fresh process, V8 still compiling). */
  cold: Round[];
  peakRss: number;
  commits: ReturnType<typeof commitCounter>;
  /** Processes that run workflow runs: BEGINs that find the write lock held are counted where there are several. */
  processes: number;
}

async function subject(
  prefix: string,
  helloUrl: string,
  env: Record<string, string>,
  { root, nodeOptions = [] }: { root?: string; nodeOptions?: string[] } = {},
): Promise<Subject> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const commits = commitCounter();
  const app = await startApp(
    { LOG_LEVEL: 'info', ...env, ...commits.env },
    [...commits.nodeOptions, ...nodeOptions, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
    root,
  );
  const processes = await workersUp(app);
  console.log(`${prefix.trim() || 'one process'}: ${processes} process(es) run workflow runs (load ${load1()})`);
  const waited = await call(app.url, 'POST', '/api/v1/workflows', { name: 'wait', definition: branching(helloUrl) });
  await call(app.url, 'POST', `/api/v1/workflows/${waited.id}/publish`);
  return { prefix, app, waitPath: `/api/v1/workflows/${waited.id}/runs?wait=10`, rounds: [], cold: [], peakRss: 0, commits, processes };
}

async function measureRound(s: Subject, helloUrl: string, round: number | string, hello: number, into: Round[]): Promise<void> {
  const pid = s.app.child.pid!;
  /** Commits and busy BEGINs between two counts, per run (or call). */
  const perRun = (from: { commits: number; busy: number }, to: { commits: number; busy: number }, runs: number) => ({
    commits: (to.commits - from.commits) / runs,
    busy: (to.busy - from.busy) / runs,
  });
  const busyText = (busy: number) => (s.processes > 1 ? `, ${busy.toFixed(3)} BEGINs finding the write lock held` : '');
  const measured = async (label: string, definition: unknown) => {
    const m = meter(pid);
    const committed = await s.commits.counts();
    const runs = await measureRuns(s.app.url, label, definition, INPUT, { runs: RUNS, connections: CONNECTIONS, window: m });
    const { commits: commitsPerRun, busy } = perRun(committed, await s.commits.counts(), RUNS);
    if (runs.failed) throw new Error(`${label}: ${runs.failed} runs failed`);
    s.peakRss = Math.max(s.peakRss, m.sample.peakRss);
    const cpuPerRun = m.sample.cpuMs / RUNS;
    console.log(
      `  ${label}: ${cpuPerRun.toFixed(3)} ms CPU per run, ${commitsPerRun.toFixed(3)} commits per run${busyText(busy)}, ` +
        `peak RSS ${(m.sample.peakRss / 2 ** 20).toFixed(0)} MB; ${m.sample.cores} (load ${load1()})`,
    );
    return { rps: runs.runsPerSecond, cpuPerRun, benchCpuPerRun: m.sample.benchCpuMs / RUNS, commitsPerRun, busy };
  };
  const set = await measured(`${s.prefix}webhook -> set, round ${round}`, webhookSet());
  const branch = await measured(`${s.prefix}webhook -> if -> set -> http-request, round ${round}`, branching(helloUrl));

  /** `?wait=10` calls from `connections` callers for WAIT_MS (after 500 ms of warm-up): req/s, p99, CPU and commits per call. */
  const waited = async (label: string, connections: number) => {
    const waitLoad = (durationMs: number): Promise<LoadResult> =>
      load({
        url: s.app.url,
        path: s.waitPath,
        method: 'POST',
        headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ input: INPUT }),
        connections,
        durationMs,
      });
    await waitLoad(500);
    const m = meter(pid);
    const committed = await s.commits.counts();
    m.open();
    const wait = await waitLoad(WAIT_MS);
    m.close();
    const { commits, busy } = perRun(committed, await s.commits.counts(), wait.requests);
    s.peakRss = Math.max(s.peakRss, m.sample.peakRss);
    if (wait.statuses[200] !== wait.requests) throw new Error(`${label}: answers ${JSON.stringify(wait.statuses)}, errors ${wait.errors}`);
    const cpu = m.sample.cpuMs / wait.requests;
    console.log(
      `  ${s.prefix}${label}: ${wait.rps.toFixed(0)} req/s, p50 ${wait.p50Ms.toFixed(1)} ms, p99 ${wait.p99Ms.toFixed(1)} ms, ` +
        `${cpu.toFixed(3)} ms CPU per run, ${commits.toFixed(3)} commits per call${busyText(busy)}; ${m.sample.cores} (load ${load1()})`,
    );
    return { rps: wait.rps, p99: wait.p99Ms, cpu, benchCpu: m.sample.benchCpuMs / wait.requests, commits, busy };
  };
  const wait = await waited('?wait=10', CONNECTIONS);
  // Fewer callers than the worker's slots (its concurrency and one per waiting caller): each run finds one free.
  const few = await waited(`?wait=10 from ${FEW_CALLERS} callers`, FEW_CALLERS);
  into.push({
    hello,
    setRuns: set.rps,
    setCpu: set.cpuPerRun,
    branchRuns: branch.rps,
    branchCpu: branch.cpuPerRun,
    waitRps: wait.rps,
    waitP99: wait.p99,
    waitCpu: wait.cpu,
    setBenchCpu: set.benchCpuPerRun,
    branchBenchCpu: branch.benchCpuPerRun,
    waitBenchCpu: wait.benchCpu,
    setCommits: set.commitsPerRun,
    branchCommits: branch.commitsPerRun,
    waitCommits: wait.commits,
    setBusy: set.busy,
    branchBusy: branch.busy,
    waitBusy: wait.busy,
    fewRps: few.rps,
    fewP99: few.p99,
    fewCpu: few.cpu,
    fewCommits: few.commits,
  });
}

const figure = (metric: string, value: number, unit: string, baseline: number | null, ratio: number | null, target: string) =>
  report({ bench: BENCH, metric, value, unit, baseline, ratio, target: `${target} (load ${load1()})` });

function reportSubject({ prefix, rounds, cold, peakRss, processes }: Subject): void {
  const mid = (pick: (r: Round) => number) => median(rounds.map(pick));
  const perHello = (pick: (r: Round) => number) => median(rounds.map((r) => pick(r) / r.hello));
  const hellos = mid((r) => r.hello);
  const name = prefix.replace(/[^a-z]+/g, '_');
  figure(
    `${name}set_completed_runs_per_s`,
    mid((r) => r.setRuns),
    'runs/s',
    hellos,
    perHello((r) => r.setRuns),
    '>= 1600 runs/s, ratio >= 0.11',
  );
  figure(
    `${name}set_cpu_per_run`,
    mid((r) => r.setCpu),
    'ms',
    null,
    null,
    '<= 0.35 ms',
  );
  figure(
    `${name}branching_completed_runs_per_s`,
    mid((r) => r.branchRuns),
    'runs/s',
    hellos,
    perHello((r) => r.branchRuns),
    '>= 1400 runs/s',
  );
  figure(
    `${name}branching_cpu_per_run`,
    mid((r) => r.branchCpu),
    'ms',
    null,
    null,
    '<= 0.6 ms',
  );
  figure(
    `${name}branching_wait_rps`,
    mid((r) => r.waitRps),
    'req/s',
    hellos,
    perHello((r) => r.waitRps),
    '>= 1200 req/s',
  );
  figure(
    `${name}branching_wait_p99`,
    mid((r) => r.waitP99),
    'ms',
    null,
    null,
    '<= 100 ms',
  );
  figure(
    `${name}branching_wait_cpu_per_run`,
    mid((r) => r.waitCpu),
    'ms',
    null,
    null,
    'informational',
  );
  for (const [metric, pick] of [
    ['set_bench_cpu_per_run', (r: Round) => r.setBenchCpu],
    ['branching_bench_cpu_per_run', (r: Round) => r.branchBenchCpu],
    ['branching_wait_bench_cpu_per_run', (r: Round) => r.waitBenchCpu],
  ] as const)
    figure(`${name}${metric}`, mid(pick), 'ms', null, null, 'informational: the CPU of this bench, sending the load from the same cores');
  for (const [metric, pick] of [
    ['set_commits_per_run', (r: Round) => r.setCommits],
    ['branching_commits_per_run', (r: Round) => r.branchCommits],
    ['branching_wait_commits_per_call', (r: Round) => r.waitCommits],
    ['few_callers_wait_commits_per_call', (r: Round) => r.fewCommits],
  ] as const)
    figure(`${name}${metric}`, mid(pick), 'commits', null, null, 'fewer is better; top-level SQLite transactions');
  // Processes sharing the file take its write lock in turn; a BEGIN that finds it held is asked again later.
  for (const [metric, pick] of [
    ['set_lock_busy_per_run', (r: Round) => r.setBusy],
    ['branching_lock_busy_per_run', (r: Round) => r.branchBusy],
    ['branching_wait_lock_busy_per_call', (r: Round) => r.waitBusy],
  ] as const)
    if (processes > 1)
      figure(`${name}${metric}`, mid(pick), 'BEGINs', null, null, 'informational: transactions whose BEGIN found the write lock held');
  for (const [metric, unit, pick] of [
    ['few_callers_wait_rps', 'req/s', (r: Round) => r.fewRps],
    ['few_callers_wait_p99', 'ms', (r: Round) => r.fewP99],
    ['few_callers_wait_cpu_per_call', 'ms', (r: Round) => r.fewCpu],
  ] as const)
    figure(`${name}${metric}`, mid(pick), unit, null, null, `informational: ${FEW_CALLERS} callers`);
  figure(`${name}rss_peak`, peakRss / 2 ** 20, 'MB', null, null, '<= 600 MB, all the service processes');
  if (cold.length === 0) return;
  for (const [metric, pick] of [
    ['set_cpu_per_run', (r: Round) => r.setCpu],
    ['branching_cpu_per_run', (r: Round) => r.branchCpu],
    ['branching_wait_cpu_per_run', (r: Round) => r.waitCpu],
  ] as const)
    figure(`${name}cold_${metric}`, median(cold.map(pick)), 'ms', null, null, 'informational: the warm-up rounds of a fresh process');
}

/** Figures of `after` against `before` measured in the same rounds: each the median, its ratio the median of the rounds' after/before. */
function reportPaired(after: Subject, before: Subject, suffix: string): void {
  const paired = (pick: (r: Round) => number) => median(after.rounds.map((r, i) => pick(r) / pick(before.rounds[i])));
  const mid = (rounds: Round[], pick: (r: Round) => number) => median(rounds.map(pick));
  const name = after.prefix.replace(/[^a-z]+/g, '_');
  for (const [metric, pick, better] of [
    ['set_completed_runs_per_s', (r: Round) => r.setRuns, 'higher'],
    ['branching_completed_runs_per_s', (r: Round) => r.branchRuns, 'higher'],
    ['branching_wait_rps', (r: Round) => r.waitRps, 'higher'],
    ['branching_wait_p99', (r: Round) => r.waitP99, 'lower'],
    ['set_cpu_per_run', (r: Round) => r.setCpu, 'lower'],
    ['branching_cpu_per_run', (r: Round) => r.branchCpu, 'lower'],
    ['branching_wait_cpu_per_run', (r: Round) => r.waitCpu, 'lower'],
    ['branching_wait_commits_per_call', (r: Round) => r.waitCommits, 'lower'],
    ['few_callers_wait_cpu_per_call', (r: Round) => r.fewCpu, 'lower'],
    ['few_callers_wait_commits_per_call', (r: Round) => r.fewCommits, 'lower'],
  ] as const) {
    const value = mid(after.rounds, pick);
    if (Number.isNaN(value)) continue;
    figure(
      `${name}${metric}_${suffix}`,
      value,
      metric.endsWith('_per_s') ? 'runs/s' : metric.endsWith('_rps') ? 'req/s' : metric.includes('commits') ? 'commits' : 'ms',
      mid(before.rounds, pick),
      paired(pick),
      `${better} is better; ratio: median of the rounds' ${suffix.replace('_vs_', '/')}`,
    );
  }
}

async function main() {
  const unknown = LAYOUTS.filter((layout) => layout !== 'one' && layout !== 'default');
  if (unknown.length) throw new Error(`BENCH_LAYOUTS: unknown ${unknown.join(', ')} (one, default)`);
  const hello = await startHelloServer();
  const subjects: Subject[] = [];
  try {
    const beforeRoot = process.env.BENCH_BEFORE_ROOT;
    for (const [layout, prefix, env] of [
      ['one', '', ONE_PROCESS_RUNS_ENV],
      ['default', 'default ', DEFAULT_LAYOUT_RUNS_ENV],
    ] as const) {
      if (!LAYOUTS.includes(layout)) continue;
      if (beforeRoot) subjects.push(await subject(`before ${prefix}`, hello.url, env, { root: beforeRoot }));
      subjects.push(await subject(prefix, hello.url, env));
      if (layout === 'default' && (Object.keys(TRY_ENV).length || TRY_NODE_OPTIONS.length))
        subjects.push(await subject('try ', hello.url, { ...env, ...TRY_ENV }, { nodeOptions: TRY_NODE_OPTIONS }));
    }
    for (let round = 1; round <= WARM_ROUNDS; round++)
      for (const s of subjects) await measureRound(s, hello.url, `warm-up ${round}`, NaN, s.cold);
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
      for (const s of subjects) await measureRound(s, hello.url, round, baseline.rps, s.rounds);
    }
  } finally {
    for (const s of subjects) {
      await s.app.stop();
      s.commits.remove();
    }
    await hello.stop();
  }

  figure('fastify_hello_rps', median(subjects[0].rounds.map((r) => r.hello)), 'req/s', null, null, 'the baseline');
  for (const s of subjects) reportSubject(s);
  const named = (prefix: string) => subjects.find((s) => s.prefix === prefix);
  for (const s of subjects) {
    const before = named(`before ${s.prefix}`);
    if (before) reportPaired(s, before, 'after_vs_before');
  }
  const [tried, layout] = [named('try '), named('default ')];
  if (tried && layout) reportPaired(tried, layout, 'vs_default');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
