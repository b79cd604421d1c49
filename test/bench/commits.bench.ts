/**
 * Issue 27 (2): how many SQLite commits one run costs in the runs-cpu setting (one `all` process,
 * embedded store and queue, default settings, the queued-run limits off). The app runs with the
 * count-commits.js preload (every better-sqlite3 transaction begun outside another); RUNS webhooks
 * of webhook -> set, then of webhook -> if -> set -> http-request, at 50 connections, the count read
 * before and after each. A commit costs its BEGIN, COMMIT and the WAL pages it writes, whatever it holds.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/commits.bench.ts
 * BENCH_BEFORE_ROOT=<dir> (an earlier build's dist/ and node_modules/) counts that build too, its
 * turn before this one's in each round: `before_` figures, and ratios after/before.
 */
import { loadavg } from 'node:os';
import { figures, measureRuns, median, startApp, startHelloServer } from './lib/bench-kit';
import { commitCounter } from './lib/commit-count';
import { branching, ONE_PROCESS_RUNS_ENV, webhookSet } from './lib/run-workflows';

const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const INPUT = { query: 'what is a vector', collection: 'col_1' };

async function main(): Promise<void> {
  const hello = await startHelloServer();
  const builds = [...(process.env.BENCH_BEFORE_ROOT ? [{ prefix: 'before_', root: process.env.BENCH_BEFORE_ROOT }] : []), { prefix: '' }];
  const perRun = new Map<string, number[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const { prefix, root } of builds) {
      const counter = commitCounter();
      const commitsOf = counter.of;
      const app = await startApp({ ...ONE_PROCESS_RUNS_ENV, ...counter.env }, counter.nodeOptions, root);
      try {
        for (const [workload, definition] of [
          ['set', webhookSet()],
          ['branching', branching(hello.url)],
        ] as const) {
          const before = await commitsOf();
          await measureRuns(app.url, `${prefix}${workload}, round ${round}`, definition, INPUT, { runs: RUNS, connections: 50 });
          const commits = (await commitsOf()) - before;
          console.log(
            `  ${prefix}${workload}, round ${round}: ${(commits / RUNS).toFixed(3)} commits per run (load ${loadavg()[0].toFixed(1)})`,
          );
          perRun.set(`${prefix}${workload}`, [...(perRun.get(`${prefix}${workload}`) ?? []), commits / RUNS]);
        }
      } finally {
        await app.stop();
        counter.remove();
      }
    }
  }
  await hello.stop();
  const report = figures('commits', `${RUNS} runs a round, load ${loadavg()[0].toFixed(1)}`);
  for (const workload of ['set', 'branching']) {
    const after = median(perRun.get(workload)!);
    const before = perRun.get(`before_${workload}`);
    if (before) report(`before_${workload}_commits_per_run`, median(before), 'commits', null, 'informational');
    report(`${workload}_commits_per_run`, after, 'commits', before ? median(before) : null, 'fewer is better; ratio: after/before');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
