/**
 * Backpressure (issue 19, section 3): are the workers starved by the acceptor? One process
 * (APP_ROLE=all) with the default admission limits runs webhook-trigger -> http-request (the local
 * upstream is the bare Fastify hello-world server in its own process). Webhooks are sent at 50
 * connections for 10 s, a closed loop that ignores Retry-After (the worst client); meanwhile the
 * completed runs/s are counted. When the load stops, the backlog it left is drained with no
 * acceptor load and its completed runs/s are the baseline: under load / drain >= 0.7 is the target.
 * Also reported: the 202/429/503 answers, and the largest queue age seen (the oldest queued run,
 * as /health/ready shows it, read every 250 ms).
 *
 * Measured for each JOB_CONCURRENCY in BENCH_CONCURRENCIES (default 2,4,8,16) on the embedded
 * queue, and on Bull when Redis answers (BENCH_QUEUES=embedded,bull picks): README's default comes
 * from these figures. Last, with Bull on a redis-server of its own that it then kills: how long the
 * webhook takes to answer 503 (target: within 2 s), and that no run is left.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { testRedis } from '../utils/workflows-fixtures';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_KEY,
  benchPort,
  call,
  cpuMicros,
  load,
  median,
  ownCpuMicros,
  percentile,
  processTree,
  report,
  startApp,
  startHelloServer,
  tempDataDir,
} from './lib/bench-kit';
import { commitCounter } from './lib/commit-count';

const CONNECTIONS = 50;
const LOAD_MS = Number(process.env.BENCH_LOAD_MS ?? 10_000);
const DRAIN_DEADLINE_MS = 120_000;
const POLL_MS = 250;
/** The backlog the drain baseline works off; its first WARM_RUNS warm the process up and are not timed. */
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 5000);
const WARM_RUNS = 1000;
/** Each configuration is measured this many times (fresh processes each time); the figures are the medians. */
const REPEAT = Number(process.env.BENCH_REPEAT ?? 1);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCIES ?? '2,4,8,16').split(',').map(Number);
const QUEUES = (process.env.BENCH_QUEUES ?? 'embedded,bull').split(',');
/** BENCH_BEFORE_ROOT=<dir> (an earlier build's dist/ and node_modules/) measures that build too, right before this one in every round (`before_` figures). */
const BUILDS: { prefix: string; root?: string }[] = [
  ...(process.env.BENCH_BEFORE_ROOT ? [{ prefix: 'before_', root: process.env.BENCH_BEFORE_ROOT }] : []),
  { prefix: '' },
];
/** BENCH_REFUSAL_DELAY_MS=0 shows what the hold before a refusal buys (the service default otherwise). */
const REFUSAL_DELAY: Record<string, string> =
  process.env.BENCH_REFUSAL_DELAY_MS === undefined ? {} : { RUNS_REFUSAL_DELAY_MS: process.env.BENCH_REFUSAL_DELAY_MS };

const workflowDefinition = (upstreamUrl: string) => ({
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    {
      id: 'search',
      type: 'http-request',
      parameters: { method: 'POST', url: `${upstreamUrl}/hello`, body: '{"text": input.query, "top_k": "5"}' },
      parameterMode: { body: 'expression' },
    },
  ],
  edges: [{ from: 'trigger', to: 'search' }],
});

/** A counter's value in the app's /metrics (one process here: every run it completes). */
async function succeeded(appUrl: string): Promise<number> {
  const text = await (await fetch(`${appUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('workflow_runs_total{status="succeeded"} '));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function runQueue(appUrl: string): Promise<{ queued: number; oldestAgeSeconds: number }> {
  const ready = (await (await fetch(`${appUrl}/health/ready`)).json()) as {
    details?: { runs?: { queued: number; oldestAgeSeconds: number } };
  };
  const runs = ready.details?.runs;
  if (!runs) throw new Error(`/health/ready shows no run queue: ${JSON.stringify(ready)}`);
  return runs;
}

/**
 * BENCH_DIAG=1: where the CPU goes in each phase (drain, under load): every process's CPU (the
 * service's first process, its worker processes, the upstream, this bench's client), the machine's
 * idle CPU (/proc/stat), and the SQLite commits and BEGINs finding the write lock held (count-commits.js
 * preload), each per completed run.
 */
const DIAG = process.env.BENCH_DIAG === '1';
/** BENCH_DIAG=1 BENCH_STATEMENTS_DIR=<dir> adds each process's statements per run (the count-statements.js preload). */
const STATEMENTS_PRELOAD = DIAG && process.env.BENCH_STATEMENTS_DIR ? ['-r', join(__dirname, 'lib', 'count-statements.js')] : [];

interface Snapshot {
  at: number;
  /** The clock of a --cpu-prof profile's timestamps (µs), to slice a profile by phase. */
  monotonicUs: number;
  done: number;
  cpu: Map<string, number>;
  idle: number;
  total: number;
  commits: number;
  busy: number;
  /** Statements by SQL, by process (`first` or `child<pid>`), when BENCH_STATEMENTS_DIR names where a statement-counting preload writes them. */
  statements: Map<string, Map<string, number>>;
  /** /proc/<pid>/schedstat of each process's main thread: [ns running, ns waiting for a core, timeslices]. */
  sched: Map<string, number[]>;
}

const STATEMENTS_DIR = process.env.BENCH_STATEMENTS_DIR;

function machineJiffies(): { idle: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { idle: fields[3] + fields[4], total: fields.reduce((a, b) => a + b, 0) };
}

async function snapshot(appPid: number, upstreamPid: number, done: number, commits?: ReturnType<typeof commitCounter>): Promise<Snapshot> {
  const cpu = new Map<string, number>();
  const safe = (pid: number) => {
    try {
      return cpuMicros(pid);
    } catch {
      return 0;
    }
  };
  const sched = new Map<string, number[]>();
  processTree(appPid).forEach((pid, i) => {
    const name = i === 0 ? 'first' : `child${pid}`;
    cpu.set(name, safe(pid));
    try {
      // The main thread's ns on a core and ns runnable but waiting for one: the rest of the wall time it slept (nothing to do).
      sched.set(name, readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number));
    } catch {
      // gone
    }
  });
  cpu.set('upstream', safe(upstreamPid));
  cpu.set('bench', ownCpuMicros());
  const counted = commits ? await commits.counts() : { commits: 0, busy: 0 };
  const statements = new Map<string, Map<string, number>>();
  if (STATEMENTS_DIR) {
    await new Promise((r) => setTimeout(r, 200));
    processTree(appPid).forEach((pid, i) => {
      const file = `${STATEMENTS_DIR}/${pid}.json`;
      if (existsSync(file))
        statements.set(i === 0 ? 'first' : `child${pid}`, new Map(JSON.parse(readFileSync(file, 'utf8')) as [string, number][]));
    });
  }
  return {
    sched,
    statements,
    at: performance.now(),
    monotonicUs: Number(process.hrtime.bigint() / 1000n),
    done,
    cpu,
    ...machineJiffies(),
    ...counted,
  };
}

function describe(phase: string, from: Snapshot, to: Snapshot): string {
  const runs = to.done - from.done;
  const seconds = (to.at - from.at) / 1000;
  const parts = [...to.cpu].map(([name, micros]) => {
    const used = micros - (from.cpu.get(name) ?? 0);
    return `${name} ${(used / 1000 / runs).toFixed(3)} ms/run (${(used / 1e6 / seconds).toFixed(2)} cores)`;
  });
  const idle = (to.idle - from.idle) / (to.total - from.total);
  const wallNs = (to.at - from.at) * 1e6;
  const threads = [...to.sched].map(([name, [run, wait]]) => {
    const [run0, wait0] = from.sched.get(name) ?? [0, 0];
    const ran = (run - run0) / wallNs;
    const waited = (wait - wait0) / wallNs;
    return `${name} main thread ran ${(ran * 100).toFixed(0)}%, waited for a core ${(waited * 100).toFixed(0)}%, slept ${((1 - ran - waited) * 100).toFixed(0)}%`;
  });
  for (const [name, counts] of to.statements) {
    const before = from.statements.get(name) ?? new Map<string, number>();
    const diffs = [...counts].map(([sql, n]) => [sql, (n - (before.get(sql) ?? 0)) / runs] as const).filter(([, n]) => n > 0.005);
    diffs.sort((a, b) => b[1] - a[1]);
    const total = diffs.reduce((sum, [, n]) => sum + n, 0);
    console.log(
      `    ${phase} ${name}: ${total.toFixed(2)} statements/run\n${diffs.map(([sql, n]) => `      ${n.toFixed(3)} ${sql}`).join('\n')}`,
    );
  }
  return (
    `  ${phase}: ${runs} runs in ${seconds.toFixed(1)} s; ${parts.join(', ')}; machine idle ${(idle * 100).toFixed(0)}%; ` +
    `commits ${((to.commits - from.commits) / runs).toFixed(3)}/run, busy BEGINs ${((to.busy - from.busy) / runs).toFixed(3)}/run; load ${loadavg()[0].toFixed(2)}; ` +
    `profile clock ${from.monotonicUs}-${to.monotonicUs} µs\n    ${threads.join('; ')}`
  );
}

interface Measured {
  underLoad: number;
  drain: number;
  drained: number;
  accepted: number;
  refused429: number;
  refused503: number;
  acceptP99Ms: number;
  maxQueueAgeSeconds: number;
  maxQueued: number;
}

/** Waits until no run is queued; the rate counts the runs after the first `skip` (a cold process warming up). */
async function waitUntilDrained(
  appUrl: string,
  label: string,
  skip = 0,
  onFirst?: () => Promise<void>,
): Promise<{ runs: number; seconds: number }> {
  const deadline = Date.now() + DRAIN_DEADLINE_MS;
  let first: { done: number; at: number } | undefined;
  for (;;) {
    const queue = await runQueue(appUrl);
    const done = await succeeded(appUrl);
    const at = performance.now();
    if (!first && done >= skip) {
      if (onFirst) await onFirst();
      first = { done, at };
    }
    if (queue.queued === 0) return first ? { runs: done - first.done, seconds: (at - first.at) / 1000 } : { runs: 0, seconds: 0 };
    if (Date.now() > deadline) throw new Error(`${label}: ${queue.queued} runs still queued after ${DRAIN_DEADLINE_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The drain baseline first: an API-only process queues BACKLOG runs and stops; the measured process
 * starts on the same store (and Redis) and works them off with nothing accepted meanwhile (timed
 * once WARM_RUNS are done). Then, in that process, warm, the accept load.
 */
async function measure(
  label: string,
  upstreamUrl: string,
  upstreamPid: number,
  env: Record<string, string>,
  root?: string,
): Promise<Measured> {
  const shared = { DATA_DIR: tempDataDir(), FETCH_ALLOWED_HOSTS: '127.0.0.1', SWAGGER_ENABLED: 'false', ...REFUSAL_DELAY, ...env };
  // Its own limits hold the whole backlog; the measured process has the defaults.
  const acceptor = await startApp(
    {
      ...shared,
      APP_ROLE: 'api',
      RUNS_MAX_QUEUED: String(BACKLOG),
      RUNS_MAX_QUEUED_PER_WORKFLOW: String(BACKLOG),
      RUNS_MAX_QUEUED_PER_USER: String(BACKLOG),
    },
    [],
    root,
  );
  let workflowId: string;
  const body = JSON.stringify({ input: { query: 'what is a vector' } });
  try {
    const workflow = await call(acceptor.url, 'POST', '/api/v1/workflows', { name: label, definition: workflowDefinition(upstreamUrl) });
    workflowId = workflow.id;
    await call(acceptor.url, 'POST', `/api/v1/workflows/${workflowId}/publish`);
    const backlog = await load({
      url: acceptor.url,
      path: `/api/v1/workflows/${workflowId}/runs`,
      method: 'POST',
      headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
      body,
      connections: CONNECTIONS,
      durationMs: DRAIN_DEADLINE_MS,
      maxRequests: BACKLOG,
    });
    if (backlog.statuses[202] !== BACKLOG) throw new Error(`${label}: the backlog was answered ${JSON.stringify(backlog.statuses)}`);
  } finally {
    await acceptor.stop();
  }

  const commits = DIAG ? commitCounter() : undefined;
  const nodeOptions = [
    ...(process.env.BENCH_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []),
    ...(commits?.nodeOptions ?? []),
    ...STATEMENTS_PRELOAD,
  ];
  const app = await startApp({ ...shared, ...commits?.env, APP_ROLE: 'all' }, nodeOptions, root);
  const snap = async () => snapshot(app.child.pid!, upstreamPid, await succeeded(app.url), commits);
  try {
    let drainFrom: Snapshot | undefined;
    const drain = await waitUntilDrained(app.url, label, WARM_RUNS, DIAG ? async () => void (drainFrom = await snap()) : undefined);
    if (drainFrom) console.log(describe('drain', drainFrom, await snap()));

    let maxQueueAgeSeconds = 0;
    let maxQueued = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const queue = await runQueue(app.url);
        maxQueueAgeSeconds = Math.max(maxQueueAgeSeconds, queue.oldestAgeSeconds);
        maxQueued = Math.max(maxQueued, queue.queued);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    })();
    const loadFrom = DIAG ? await snap() : undefined;
    const before = await succeeded(app.url);
    const loadStarted = performance.now();
    const accepted = await load({
      url: app.url,
      path: `/api/v1/workflows/${workflowId}/runs`,
      method: 'POST',
      headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
      body,
      connections: CONNECTIONS,
      durationMs: LOAD_MS,
    });
    const atLoadEnd = await succeeded(app.url);
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    if (loadFrom) console.log(describe('under load', loadFrom, await snap()));
    polling = false;
    await poller;
    await waitUntilDrained(app.url, label);

    const statuses = accepted.statuses;
    const unexpected = Object.keys(statuses).filter((s) => !['202', '429', '503'].includes(s));
    if (unexpected.length || accepted.errors)
      throw new Error(`${label}: unexpected answers ${JSON.stringify(statuses)}, ${accepted.errors} errors`);
    const result: Measured = {
      underLoad: (atLoadEnd - before) / loadSeconds,
      drain: drain.runs / drain.seconds,
      drained: drain.runs,
      accepted: statuses[202] ?? 0,
      refused429: statuses[429] ?? 0,
      refused503: statuses[503] ?? 0,
      acceptP99Ms: accepted.p99Ms,
      maxQueueAgeSeconds,
      maxQueued,
    };
    console.log(
      `${label}: under load ${result.underLoad.toFixed(0)} completed runs/s; drain ${result.drain.toFixed(0)} runs/s (${drain.runs} runs in ${drain.seconds.toFixed(1)} s); ` +
        `ratio ${(result.underLoad / result.drain).toFixed(2)}; answers 202 ${result.accepted}, 429 ${result.refused429}, 503 ${result.refused503} ` +
        `(${accepted.rps.toFixed(0)} req/s, p99 ${accepted.p99Ms.toFixed(1)} ms); max queued ${maxQueued}, max queue age ${maxQueueAgeSeconds.toFixed(1)} s`,
    );
    return result;
  } finally {
    await app.stop();
    commits?.remove();
  }
}

/** Each figure's median over the samples; `ratio` is the median of the per-sample ratios. */
function medianOf(samples: Measured[]): Measured & { ratio: number } {
  const pick = (key: keyof Measured) => median(samples.map((sample) => sample[key]));
  return {
    underLoad: pick('underLoad'),
    drain: pick('drain'),
    drained: pick('drained'),
    accepted: pick('accepted'),
    refused429: pick('refused429'),
    refused503: pick('refused503'),
    acceptP99Ms: pick('acceptP99Ms'),
    maxQueueAgeSeconds: pick('maxQueueAgeSeconds'),
    maxQueued: pick('maxQueued'),
    ratio: median(samples.map((sample) => sample.underLoad / sample.drain)),
  };
}

function reportQueue(name: string, m: Measured & { ratio: number }): void {
  report({
    bench: 'backpressure',
    metric: `completed_runs_per_s_under_load_${name}`,
    value: m.underLoad,
    unit: 'runs/s',
    baseline: m.drain,
    ratio: m.ratio,
    target: 'ratio >= 0.7 (baseline: drain rate, no accept load; medians of BENCH_REPEAT runs)',
  });
  report({
    bench: 'backpressure',
    metric: `refused_429_${name}`,
    value: m.refused429,
    unit: 'answers',
    baseline: m.accepted,
    ratio: m.accepted ? m.refused429 / m.accepted : null,
    target: 'informational (baseline: 202 answers)',
  });
  report({
    bench: 'backpressure',
    metric: `refused_503_${name}`,
    value: m.refused503,
    unit: 'answers',
    baseline: m.accepted,
    ratio: m.accepted ? m.refused503 / m.accepted : null,
    target: 'informational (baseline: 202 answers)',
  });
  report({
    bench: 'backpressure',
    metric: `max_queue_age_${name}`,
    value: m.maxQueueAgeSeconds,
    unit: 's',
    baseline: null,
    ratio: null,
    target: 'informational (bounded by the queued-run limits)',
  });
}

/** A throwaway redis-server on 127.0.0.1:`port`, for the unreachable-queue figure. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  while (!output.includes('Ready to accept connections')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return child;
}

const stopped = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/**
 * How long the webhook takes to answer while Bull's Redis is gone (target: 503 within 2 s, no run
 * stored): CALLS webhooks at 10 connections against a process whose Redis was killed after it started.
 */
async function measureQueueDown(): Promise<{ p50Ms: number; maxMs: number; statuses: Record<number, number>; runs: number }> {
  const port = benchPort();
  let redis = await startRedis(port);
  const app = await startApp({
    APP_ROLE: 'all',
    REDIS_URL: `redis://127.0.0.1:${port}`,
    QUEUE_PREFIX: 'bench-down',
    SWAGGER_ENABLED: 'false',
  });
  try {
    const workflow = await call(app.url, 'POST', '/api/v1/workflows', {
      name: 'down',
      definition: { nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }], edges: [] },
    });
    await stopped(redis);
    const latencies: number[] = [];
    const statuses: Record<number, number> = {};
    const CALLS = 50;
    let sent = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (sent++ < CALLS) {
          const started = performance.now();
          const res = await fetch(`${app.url}/api/v1/workflows/${workflow.id}/runs`, {
            method: 'POST',
            headers: { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' },
            body: JSON.stringify({ runType: 'test', input: {} }),
          });
          await res.arrayBuffer();
          latencies.push(performance.now() - started);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        }
      }),
    );
    const runs = (await call(app.url, 'GET', `/api/v1/runs?workflowId=${workflow.id}&limit=1`)).total as number;
    latencies.sort((a, b) => a - b);
    // Back before the process stops, so its shutdown does not wait on a Redis that is gone.
    redis = await startRedis(port);
    return { p50Ms: percentile(latencies, 50), maxMs: latencies[latencies.length - 1], statuses, runs };
  } finally {
    await app.stop();
    await stopped(redis);
  }
}

async function main() {
  const upstream = await startHelloServer();
  const redis = QUEUES.includes('bull') ? await testRedis('bench-backpressure') : null;
  if (QUEUES.includes('bull') && !redis) console.log('Redis does not answer on 127.0.0.1:6379: Bull is not measured');
  try {
    for (const queue of QUEUES) {
      if (queue === 'bull' && !redis) continue;
      for (const concurrency of CONCURRENCIES) {
        const samples = new Map<string, Measured[]>(BUILDS.map((build) => [build.prefix, []]));
        for (let i = 0; i < REPEAT; i++) {
          for (const build of BUILDS) {
            const env = {
              JOB_CONCURRENCY: String(concurrency),
              ...(queue === 'bull' ? { REDIS_URL: redis!.url, QUEUE_PREFIX: `${redis!.prefix}-${build.prefix}c${concurrency}-${i}` } : {}),
            };
            const label = `${build.prefix}${queue} queue, JOB_CONCURRENCY=${concurrency}`;
            samples.get(build.prefix)!.push(await measure(label, upstream.url, upstream.child.pid!, env, build.root));
          }
        }
        for (const build of BUILDS) reportQueue(`${build.prefix}${queue}_c${concurrency}`, medianOf(samples.get(build.prefix)!));
      }
    }
    if (redis && spawnSync('redis-server', ['--version']).status === 0) {
      const down = await measureQueueDown();
      console.log(
        `webhook while Redis is down: answers ${JSON.stringify(down.statuses)}, p50 ${down.p50Ms.toFixed(0)} ms, max ${down.maxMs.toFixed(0)} ms; ${down.runs} runs stored`,
      );
      if (down.runs !== 0 || Object.keys(down.statuses).some((status) => status !== '503'))
        throw new Error('a webhook answered other than 503, or left a run, while Redis was down');
      report({
        bench: 'backpressure',
        metric: 'queue_unreachable_answer_max',
        value: down.maxMs,
        unit: 'ms',
        baseline: 2000,
        ratio: down.maxMs / 2000,
        target: '503 within 2000 ms (ratio <= 1), no run stored',
      });
    }
  } finally {
    await upstream.stop();
    await redis?.cleanup();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
