import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';

/** The admin key every bench app is started with (BOOTSTRAP_API_KEY). */
export const BENCH_KEY = 'wcs_bench_bootstrap_key_0123456789';

/** One JSON API call to a bench app as its admin; throws on a non-2xx answer. */
export async function call(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const headers: Record<string, string> = { 'x-api-key': BENCH_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

export interface Figure {
  bench: string;
  metric: string;
  value: number;
  unit: string;
  baseline: number | null;
  ratio: number | null;
  target: string;
}

/** One JSON line per figure, so runs can be compared by a machine. */
export function report(figure: Figure): void {
  const round = (n: number | null) => (n === null ? null : Math.round(n * 1000) / 1000);
  process.stdout.write(
    `${JSON.stringify({ ...figure, value: round(figure.value), baseline: round(figure.baseline), ratio: round(figure.ratio) })}\n`,
  );
}

/**
 * A `report` bound to one bench, whose ratio is value / baseline and whose target text ends with
 * `where` (the size it was measured at, and where the target's own size was measured).
 */
export function figures(bench: string, where: string) {
  return (metric: string, value: number, unit: string, baseline: number | null, target: string): void =>
    report({ bench, metric, value, unit, baseline, ratio: baseline ? value / baseline : null, target: `${target} (${where})` });
}

/** The middle value; with an even count, the mean of the two middle ones (not one round's figure). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
}

/**
 * A bounded closed-loop load generator on loopback: `connections` concurrent requesters until
 * `durationMs` passes or `maxRequests` are sent, whichever comes first.
 */
export async function load(options: {
  url: string;
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationMs: number;
  maxRequests?: number;
  warmupMs?: number;
}): Promise<LoadResult> {
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1 });
  const run = async (durationMs: number, record: boolean) => {
    const latencies: number[] = [];
    const statuses: Record<number, number> = {};
    let errors = 0;
    let sent = 0;
    const deadline = performance.now() + durationMs;
    const max = options.maxRequests ?? Infinity;
    const worker = async () => {
      while (performance.now() < deadline && sent < max) {
        sent++;
        const start = performance.now();
        try {
          const res = await pool.request({
            origin: options.url,
            path: options.path,
            method: options.method ?? 'GET',
            headers: options.headers,
            body: options.body,
          });
          await res.body.dump();
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          if (record) latencies.push(performance.now() - start);
        } catch {
          errors++;
        }
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: options.connections }, worker));
    const elapsed = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      requests: latencies.length,
      errors,
      rps: latencies.length / elapsed,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      statuses,
    };
  };
  if (options.warmupMs) await run(options.warmupMs, false);
  const result = await run(options.durationMs, true);
  await pool.close();
  return result;
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a server in its own process and waits until `readyPath` answers. */
export async function startServer(
  args: string[],
  env: Record<string, string>,
  port: number,
  readyPath = '/health',
): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    // BENCH_APP_LOG=<file>: the servers' stdout (their log lines) is appended there, to see why one stopped.
    stdio: ['ignore', process.env.BENCH_APP_LOG ? openSync(process.env.BENCH_APP_LOG, 'a') : 'ignore', 'inherit'],
  });
  let stopping = false;
  // A server that ends before the bench stops it says how, or the bench only sees refused connections.
  child.once('exit', (code, signal) => {
    if (!stopping) process.stderr.write(`server ${args.join(' ')} ended on its own: code ${code}, signal ${signal}\n`);
  });
  const url = `http://127.0.0.1:${port}`;
  // Minutes, not seconds: on a shared machine at load 15-20 a start takes over a minute.
  const deadline = Date.now() + 240_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server ${args.join(' ')} exited with ${child.exitCode}`);
    try {
      const res = await fetch(url + readyPath);
      if (res.status < 500) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`server ${args.join(' ')} did not start`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Resident memory of one process, from /proc, in bytes. */
export const rssBytes = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error('no VmRSS in /proc status');
  return Number(match[1]) * 1024;
};

/** CPU time (user + system) this process has used, all its threads, in microseconds. */
export const ownCpuMicros = (): number => {
  const used = process.cpuUsage();
  return used.user + used.system;
};

/** Words the collection benches write their passages and queries of (each in many passages). */
export const BENCH_WORDS = [
  'harbour',
  'lantern',
  'ledger',
  'invoice',
  'glacier',
  'sourdough',
  'volcano',
  'refund',
  'contract',
  'orbit',
  'pollen',
  'tariff',
];

/**
 * CPU time (user + system) one process has used, all its threads or the one given (a process's main
 * thread has its pid for id), from /proc, in microseconds (clock ticks of 10 ms).
 */
export const cpuMicros = (pid: number, thread?: number): number => {
  const fields = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};

/** `pid` and every process under it (a service that forks workers counts as all of them); gone ones are left out. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

/** Sum of `measure` over the processes of `pid`'s tree that are still there. */
export const treeSum = (pid: number, measure: (pid: number) => number): number =>
  processTree(pid).reduce((sum, p) => {
    try {
      return sum + measure(p);
    } catch {
      return sum;
    }
  }, 0);

/** Data directories this bench made and has not removed yet: a million passages leave 14 GB in one. */
const dataDirs = new Set<string>();

/** A fresh data directory, removed when the bench process exits (or before, by removeDataDir). */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wcs-bench-'));
  if (dataDirs.size === 0) process.once('exit', () => dataDirs.forEach(removeDataDir));
  dataDirs.add(dir);
  return dir;
}

/** Removes a directory tempDataDir made, once no server uses it. */
export function removeDataDir(dir: string): void {
  if (dataDirs.delete(dir)) rmSync(dir, { recursive: true, force: true });
}

/**
 * A free-enough port for a bench child: random, and below Linux's ephemeral range (32768 and up),
 * where the benches' own client sockets take their local ports (a collision there failed a run
 * with EADDRINUSE).
 */
export const benchPort = (): number => 20000 + Math.floor(Math.random() * 12000);

const ROOT = join(__dirname, '..', '..', '..');
let built = false;

/**
 * The service from dist/ (built first if it is stale) in its own process, on a fresh data
 * directory, with BENCH_KEY as its bootstrap admin; `env` adds to or overrides those settings.
 * `root` runs another build instead (a directory holding its dist/ and node_modules/), as it is.
 */
export function startApp(env: Record<string, string> = {}, nodeOptions: string[] = [], root = ROOT): Promise<ServerProcess> {
  if (!built && root === ROOT) {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.js')], { stdio: 'inherit' });
    built = true;
  }
  // A directory of its own unless the bench shares one between processes (it removes that one).
  const own = env.DATA_DIR === undefined ? tempDataDir() : undefined;
  // As `npm start` starts it: two malloc arenas unless the bench's environment says otherwise (package.json).
  const settings = {
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    DATA_DIR: own,
    BOOTSTRAP_API_KEY: BENCH_KEY,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    ...env,
  };
  const started = startServer(
    ['--no-node-snapshot', ...nodeOptions, join(root, 'dist', 'src', 'main.js')],
    settings as Record<string, string>,
    benchPort(),
  );
  if (!own) return started;
  return started.then(
    (server) => ({ ...server, stop: () => server.stop().then(() => removeDataDir(own)) }),
    (error: unknown) => {
      removeDataDir(own);
      throw error;
    },
  );
}

/**
 * Waits until every worker process of `app` is up (`npm start` with WORKERS above 1: its
 * /health/ready counts them), and returns how many processes run the service's runs.
 */
export async function workersUp(app: ServerProcess): Promise<number> {
  for (const deadline = Date.now() + 240_000; ; await new Promise((r) => setTimeout(r, 200))) {
    const ready = (await (await fetch(`${app.url}/health/ready`)).json()) as {
      details?: { workers?: { processes?: number; of?: number } };
    };
    const workers = ready.details?.workers;
    if (!workers) return 1;
    if (workers.processes === workers.of) return workers.of!;
    if (Date.now() > deadline) throw new Error(`only ${JSON.stringify(workers)} worker processes came up`);
  }
}

/** The baseline every HTTP figure is compared with: a bare Fastify hello-world server in its own process. */
export const startHelloServer = (): Promise<ServerProcess> => startServer([join(__dirname, 'hello-server.js')], {}, benchPort());

export interface MeasuredRuns {
  runsPerSecond: number;
  acceptRps: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
}

/**
 * Completed runs per second of one published workflow: `runs` webhooks at `connections`, the
 * clock stopping when the last run has finished. One warm-up run first compiles the plan, fills
 * caches and opens the upstream connections. Also the accept rate and accept-to-finish latencies.
 * `window` is told when the clock starts and when it stops (to measure the server over that span).
 */
export async function measureRuns(
  appUrl: string,
  label: string,
  definition: unknown,
  input: unknown,
  options: { runs: number; connections: number; window?: { open(): void; close(): void } },
): Promise<MeasuredRuns> {
  const { runs, connections, window } = options;
  const workflow = await call(appUrl, 'POST', '/api/v1/workflows', { name: label, definition });
  await call(appUrl, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
  const count = async (status: string) =>
    (await call(appUrl, 'GET', `/api/v1/runs?workflowId=${workflow.id}&status=${status}&limit=1`)).total as number;

  await call(appUrl, 'POST', `/api/v1/workflows/${workflow.id}/runs`, { input });
  while ((await count('succeeded')) + (await count('failed')) < 1) await new Promise((r) => setTimeout(r, 20));

  window?.open();
  const started = performance.now();
  const accepted = await load({
    url: appUrl,
    path: `/api/v1/workflows/${workflow.id}/runs`,
    method: 'POST',
    headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ input }),
    connections,
    durationMs: 120_000,
    maxRequests: runs,
  });
  const acceptSeconds = (performance.now() - started) / 1000;
  if (accepted.statuses[202] !== runs)
    throw new Error(`${label}: accepted ${JSON.stringify(accepted.statuses)}, errors ${accepted.errors}`);
  let done = 0;
  const deadline = Date.now() + 180_000;
  while ((done = (await count('succeeded')) + (await count('failed'))) < runs + 1) {
    if (Date.now() > deadline) throw new Error(`${label}: only ${done} of ${runs + 1} runs finished`);
    // Every 2% of the time so far: the clock stops within that, and a slow round's counting (each a
    // scan of the workflow's runs) does not add to the CPU measured for the runs.
    await new Promise((r) => setTimeout(r, Math.min(500, Math.max(25, (performance.now() - started) / 50))));
  }
  const seconds = (performance.now() - started) / 1000;
  window?.close();
  const failed = await count('failed');

  const latencies: number[] = [];
  for (let offset = 0; offset < runs; offset += 100) {
    const page = await call(appUrl, 'GET', `/api/v1/runs?workflowId=${workflow.id}&offset=${offset}&limit=100`);
    for (const run of page.items) if (run.finishedAt) latencies.push(Date.parse(run.finishedAt) - Date.parse(run.createdAt));
  }
  latencies.sort((a, b) => a - b);
  const result = {
    runsPerSecond: runs / seconds,
    acceptRps: runs / acceptSeconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    failed,
  };
  console.log(
    `${label}: ${runs} runs in ${seconds.toFixed(2)} s = ${result.runsPerSecond.toFixed(0)} completed runs/s (accepted at ${result.acceptRps.toFixed(0)}/s; ` +
      `accept-to-finish p50 ${result.p50Ms.toFixed(0)} ms, p99 ${result.p99Ms.toFixed(0)} ms; ${failed} failed)`,
  );
  return result;
}
