/**
 * Issue 27 (2), its last target: with the fairness of the many-users issue on, no more than 10% below
 * the run targets. The app runs as runs-cpu runs it (one process, APP_ROLE=all, WORKERS=1, embedded
 * store and queue) but with the DEFAULT queued-run limits (per workflow, per user, of all); fair
 * turns between users are always on. In each round, for webhook -> set and then for
 * webhook -> if -> set -> http-request, one after the other (taking turns at going first):
 * (a) one user, one workflow: RUNS webhooks at 50 connections;
 * (b) the same RUNS over USERS users, each with its own API key and its own workflow (the same
 *     definition), CONNECTIONS_PER_USER connections each, all at once.
 * Each measures completed runs/s (the clock starts at the first webhook and stops at the last run's
 * `finishedAt`), the CPU of the service's processes per completed run (from the first webhook until
 * the bench saw the last run finished, counting one workflow at a time in either case), each user's
 * completed runs/s (its runs over the time to its own last run's end; min/max is how even the shares
 * were) and the 429/503 answers: a refusal is retried after its Retry-After and counted. At the
 * defaults none is expected: RUNS (1,000) is the per-workflow limit, so even (a)'s backlog, if the
 * workers took none, stays below it, and each user of (b) posts RUNS / USERS.
 * Ratios are (b)/(a) of the same round (the machine's load moves between rounds); each figure is the
 * median round, each ratio the median of the rounds' ratios. Target: completed runs/s >= 0.9 of one
 * user's, CPU per run <= 1.1 of it. BENCH_WARM_ROUNDS (1) rounds run first and are left out: in a
 * fresh process V8 is still compiling the run's path (see runs-cpu).
 *
 *   npm run bench -- fair-runs    (BENCH_ROUNDS, BENCH_RUNS, BENCH_USERS, BENCH_WARM_ROUNDS)
 *
 * To see where either side's CPU goes: BENCH_CPU_PROF=<dir> starts the app with --cpu-prof (its profile
 * written there when it stops), and BENCH_ONLY=one or BENCH_ONLY=many measures that side alone (no
 * ratios then), so that each side's profile holds only its own runs; summarise with
 * `node test/bench/lib/cpuprofile-summary.js <file> 12 2.5`.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { call, cpuMicros, median, report, ServerProcess, startApp, startHelloServer, treeSum } from './lib/bench-kit';
import { branching, ONE_PROCESS_ENV, webhookSet } from './lib/run-workflows';
import { perRun, statementCounter } from './lib/statement-count';

const BENCH = 'fair-runs';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_ROUNDS = Number(process.env.BENCH_WARM_ROUNDS ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 1000);
const USERS = Number(process.env.BENCH_USERS ?? 5);
const ONE_USER_CONNECTIONS = 50;
const CONNECTIONS_PER_USER = 10;
const ONLY = process.env.BENCH_ONLY as 'one' | 'many' | undefined;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const INPUT = { query: 'what is a vector', collection: 'col_1' };
/** The service's SQLite statements, counted by their SQL (it starts with the counter's preload). */
const counter = statementCounter();
/** How long a round may take to finish its runs before the bench gives up. */
const FINISH_DEADLINE_MS = 300_000;

/**
 * The write syscalls a process has made (write, writev, pwrite64: /proc/<pid>/io's syscw). Most of a
 * run's are SQLite's WAL frames (a header and a page each) and the checkpoint's copies of them; the
 * rest are its HTTP answers and upstream calls. A count the machine's load hardly moves.
 */
const writeSyscalls = (pid: number): number => Number(/^syscw:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
const load1 = () => loadavg()[0].toFixed(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const total = (statements: Map<string, number>) => [...statements.values()].reduce((sum, n) => sum + n, 0);

/** One JSON API call as `key`; throws on a non-2xx answer. */
async function as(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * `runs` webhooks to `path` as `key` from `connections` callers; a 429 or 503 is retried after its
 * Retry-After (the run was not started). Resolves with the count of those refusals.
 */
async function postRuns(url: string, key: string, path: string, runs: number, connections: number): Promise<number> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const body = JSON.stringify({ input: INPUT });
  let left = runs;
  let refused = 0;
  const caller = async () => {
    while (left > 0) {
      left--;
      for (;;) {
        const res = await pool.request({ path, method: 'POST', headers, body });
        const text = await res.body.text();
        if (res.statusCode === 202) break;
        if (res.statusCode !== 429 && res.statusCode !== 503) throw new Error(`POST ${path}: ${res.statusCode} ${text}`);
        refused++;
        await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, caller));
  } finally {
    await pool.close();
  }
  return refused;
}

interface User {
  name: string;
  key: string;
}

/** One user's part of a measurement: their workflow, and what it came to. */
interface Share {
  user: User;
  workflowId: string;
  runs: number;
  refused: number;
  /** The user's runs over the time from the first webhook to their last run's end. */
  runsPerSecond: number;
}

interface Measured {
  runsPerSecond: number;
  cpuPerRun: number;
  /** SQLite statements a run, by their SQL (the count-statements.js preload): a count the machine's load hardly moves. */
  statements: Map<string, number>;
  /** Write syscalls a run (writeSyscalls): SQLite's WAL frames and checkpoints, mostly; load-independent too. */
  writes: number;
  refused: number;
  shares: Share[];
}

/** Finished runs (succeeded or failed) of one workflow. */
async function finished(url: string, share: Share): Promise<number> {
  const count = async (status: string) =>
    (await as(url, share.user.key, 'GET', `/api/v1/runs?workflowId=${share.workflowId}&status=${status}&limit=1`)).total as number;
  return (await count('succeeded')) + (await count('failed'));
}

/** The latest `finishedAt` of a workflow's runs (ms since the epoch), and how many failed. */
async function lastEnd(url: string, share: Share): Promise<{ end: number; failed: number }> {
  let end = 0;
  let failed = 0;
  for (let offset = 0; offset <= share.runs; offset += 100) {
    const page = await as(url, share.user.key, 'GET', `/api/v1/runs?workflowId=${share.workflowId}&offset=${offset}&limit=100`);
    for (const run of page.items) {
      if (run.finishedAt) end = Math.max(end, Date.parse(run.finishedAt));
      if (run.status === 'failed') failed++;
    }
  }
  return { end, failed };
}

/**
 * RUNS runs of `definition` split evenly over `users`, each on a workflow of their own posted from
 * `connections` callers, all users at once. One run of each workflow first (not counted) compiles
 * its plan and opens the upstream's connections.
 */
async function measure(app: ServerProcess, label: string, definition: unknown, users: User[], connections: number): Promise<Measured> {
  const shares: Share[] = [];
  for (const user of users) {
    const workflow = await as(app.url, user.key, 'POST', '/api/v1/workflows', { name: `${label} ${user.name}`, definition });
    await as(app.url, user.key, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
    const share = { user, workflowId: workflow.id as string, runs: RUNS / users.length, refused: 0, runsPerSecond: 0 };
    await as(app.url, user.key, 'POST', `/api/v1/workflows/${workflow.id}/runs`, { input: INPUT });
    while ((await finished(app.url, share)) < 1) await sleep(20);
    shares.push(share);
  }

  const pid = app.child.pid!;
  const counted = await counter.of(pid);
  const cpuBefore = treeSum(pid, cpuMicros);
  const writesBefore = treeSum(pid, writeSyscalls);
  const startedAt = Date.now();
  const started = performance.now();
  await Promise.all(
    shares.map(async (share) => {
      share.refused = await postRuns(app.url, share.user.key, `/api/v1/workflows/${share.workflowId}/runs`, share.runs, connections);
    }),
  );
  // One workflow's count at a time, as often as one-workflow benches count theirs (every 2% of the
  // time so far): the counting costs (b) no more of the CPU measured than it costs (a).
  const waiting = [...shares];
  const deadline = Date.now() + FINISH_DEADLINE_MS;
  while (waiting.length > 0) {
    const done = await finished(app.url, waiting[0]);
    if (done >= waiting[0].runs + 1) {
      waiting.shift();
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${label}: ${waiting[0].user.name} finished only ${done} of ${waiting[0].runs + 1} runs`);
    await sleep(Math.min(500, Math.max(25, (performance.now() - started) / 50)));
  }
  const cpuMs = (treeSum(pid, cpuMicros) - cpuBefore) / 1000;
  const writes = (treeSum(pid, writeSyscalls) - writesBefore) / RUNS;
  const statements = perRun(counted, await counter.of(pid), RUNS);

  let end = 0;
  let failed = 0;
  for (const share of shares) {
    const last = await lastEnd(app.url, share);
    share.runsPerSecond = share.runs / ((last.end - startedAt) / 1000);
    end = Math.max(end, last.end);
    failed += last.failed;
  }
  if (failed) throw new Error(`${label}: ${failed} runs failed`);
  const result = {
    runsPerSecond: RUNS / ((end - startedAt) / 1000),
    cpuPerRun: cpuMs / RUNS,
    statements,
    writes,
    refused: shares.reduce((sum, share) => sum + share.refused, 0),
    shares,
  };
  console.log(
    `  ${label}: ${RUNS} runs in ${((end - startedAt) / 1000).toFixed(2)} s = ${result.runsPerSecond.toFixed(0)} completed runs/s, ` +
      `${result.cpuPerRun.toFixed(3)} ms CPU, ${total(statements).toFixed(1)} statements and ${writes.toFixed(1)} write syscalls per run, ` +
      `${result.refused} refused` +
      (shares.length > 1 ? `; per user ${shares.map((share) => share.runsPerSecond.toFixed(0)).join(', ')} runs/s` : '') +
      ` (load ${load1()})`,
  );
  return result;
}

const KINDS = ['set', 'branching'] as const;
type Kind = (typeof KINDS)[number];

interface Round {
  one: Measured;
  many: Measured;
}

async function measureRound(
  app: ServerProcess,
  helloUrl: string,
  round: string,
  manyFirst: boolean,
  solo: User,
  users: User[],
): Promise<Record<Kind, Round>> {
  const definitions: Record<Kind, unknown> = { set: webhookSet(), branching: branching(helloUrl) };
  const measured = {} as Record<Kind, Round>;
  for (const kind of KINDS) {
    const oneUser = () => measure(app, `${kind}, one user, round ${round}`, definitions[kind], [solo], ONE_USER_CONNECTIONS);
    const manyUsers = () => measure(app, `${kind}, ${USERS} users, round ${round}`, definitions[kind], users, CONNECTIONS_PER_USER);
    // Taking turns at going first: what the machine's load or the store's growth does to the second
    // of a pair falls on each side in as many rounds.
    if (ONLY) {
      const alone = ONLY === 'one' ? await oneUser() : await manyUsers();
      measured[kind] = { one: alone, many: alone };
      continue;
    }
    let one = manyFirst ? undefined : await oneUser();
    const many = await manyUsers();
    one ??= await oneUser();
    console.log(
      `  ${kind}, round ${round}: ${USERS} users / one user: completed runs/s ${(many.runsPerSecond / one.runsPerSecond).toFixed(3)}, ` +
        `CPU per run ${(many.cpuPerRun / one.cpuPerRun).toFixed(3)} (load ${load1()})`,
    );
    measured[kind] = { one, many };
  }
  return measured;
}

function reportKind(kind: Kind, rounds: Round[]): void {
  const figure = (metric: string, value: number, unit: string, baseline: number | null, ratio: number | null, target: string) =>
    report({ bench: BENCH, metric: `${kind}_${metric}`, value, unit, baseline, ratio, target: `${target} (load ${load1()})` });
  const mid = (pick: (r: Round) => number) => median(rounds.map(pick));
  const many = `${USERS}_users`;
  const issue = kind === 'set' ? { rps: 1600, cpu: 0.35 } : { rps: 1400, cpu: 0.6 };

  const oneRps = mid((r) => r.one.runsPerSecond);
  const oneCpu = mid((r) => r.one.cpuPerRun);
  figure('one_user_completed_runs_per_s', oneRps, 'runs/s', null, null, `the baseline; issue 27: >= ${issue.rps} runs/s`);
  figure('one_user_cpu_per_run', oneCpu, 'ms', null, null, `the baseline; issue 27: <= ${issue.cpu} ms`);
  figure(
    `${many}_completed_runs_per_s`,
    mid((r) => r.many.runsPerSecond),
    'runs/s',
    oneRps,
    mid((r) => r.many.runsPerSecond / r.one.runsPerSecond),
    ">= 0.9 of one user's (ratio: the median of the rounds' ratios)",
  );
  figure(
    `${many}_cpu_per_run`,
    mid((r) => r.many.cpuPerRun),
    'ms',
    oneCpu,
    mid((r) => r.many.cpuPerRun / r.one.cpuPerRun),
    "<= 1.1 of one user's (ratio: the median of the rounds' ratios)",
  );
  const oneStatements = mid((r) => total(r.one.statements));
  figure('one_user_statements_per_run', oneStatements, 'statements', null, null, 'the baseline; SQLite statements, load-independent');
  figure(
    `${many}_statements_per_run`,
    mid((r) => total(r.many.statements)),
    'statements',
    oneStatements,
    mid((r) => total(r.many.statements) / total(r.one.statements)),
    "informational: what explains a CPU ratio over 1 (ratio: the median of the rounds' ratios)",
  );
  const oneWrites = mid((r) => r.one.writes);
  figure('one_user_write_syscalls_per_run', oneWrites, 'syscalls', null, null, 'the baseline; mostly WAL frames, load-independent');
  figure(
    `${many}_write_syscalls_per_run`,
    mid((r) => r.many.writes),
    'syscalls',
    oneWrites,
    mid((r) => r.many.writes / r.one.writes),
    "informational: what explains a CPU ratio over 1 with the same statements (ratio: the median of the rounds' ratios)",
  );
  // Where the statements differ, in the last round: more than 0.05 a run either way.
  const last = rounds[rounds.length - 1];
  const sqls = new Set([...last.one.statements.keys(), ...last.many.statements.keys()]);
  const differ = [...sqls]
    .map((sql) => [sql, (last.many.statements.get(sql) ?? 0) - (last.one.statements.get(sql) ?? 0)] as const)
    .filter(([, more]) => Math.abs(more) > 0.05)
    .sort((a, b) => b[1] - a[1]);
  process.stderr.write(`${kind}: statements a run, ${USERS} users less one user (last round)\n`);
  for (const [sql, more] of differ) process.stderr.write(`${more.toFixed(2).padStart(7)}  ${sql}\n`);
  const shares = (r: Round) => r.many.shares.map((share) => share.runsPerSecond);
  figure(
    `${many}_shares_min_over_max`,
    mid((r) => Math.min(...shares(r)) / Math.max(...shares(r))),
    'ratio',
    null,
    null,
    "informational: the slowest user's completed runs/s over the fastest's, 1 when even",
  );
  for (let i = 0; i < USERS; i++)
    figure(
      `${many}_user_${i + 1}_completed_runs_per_s`,
      mid((r) => shares(r)[i]),
      'runs/s',
      null,
      null,
      'informational',
    );
  for (const [who, pick] of [
    ['one_user', (r: Round) => r.one.refused],
    [many, (r: Round) => r.many.refused],
  ] as const)
    figure(
      `${who}_refusals`,
      rounds.map(pick).reduce((a, b) => a + b, 0),
      'answers',
      null,
      null,
      '0: 429/503 over all rounds',
    );
}

async function main(): Promise<void> {
  const hello = await startHelloServer();
  const app = await startApp({ ...ONE_PROCESS_ENV, LOG_LEVEL: 'info', ...counter.env }, [
    ...counter.nodeOptions,
    ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []),
  ]);
  const rounds: Record<Kind, Round[]> = { set: [], branching: [] };
  try {
    const user = async (name: string): Promise<User> => ({
      name,
      key: (await call(app.url, 'POST', '/api/v1/users', { name })).apiKey.key,
    });
    const solo = await user('solo');
    const users: User[] = [];
    for (let i = 1; i <= USERS; i++) users.push(await user(`user ${i}`));
    console.log(
      `${RUNS} runs a measurement; one user at ${ONE_USER_CONNECTIONS} connections, ${USERS} users at ${CONNECTIONS_PER_USER} each`,
    );
    for (let round = 1; round <= WARM_ROUNDS; round++) await measureRound(app, hello.url, `warm-up ${round}`, false, solo, users);
    for (let round = 1; round <= ROUNDS; round++) {
      const measured = await measureRound(app, hello.url, String(round), round % 2 === 0, solo, users);
      for (const kind of KINDS) rounds[kind].push(measured[kind]);
    }
  } finally {
    await app.stop();
    await hello.stop();
    counter.remove();
  }
  if (ONLY) return; // one side alone: its figures were printed as it went, and there is no ratio
  for (const kind of KINDS) reportKind(kind, rounds[kind]);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
