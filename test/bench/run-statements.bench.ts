/**
 * Issue 27 (2): the SQL statements one run costs end to end on the embedded default (accept ->
 * queue -> claim -> steps -> finish -> job done), counted in the service process by the
 * count-statements.js preload: webhook -> set and the branching workflow (runs-cpu's two), RUNS
 * runs each at 50 connections, as runs-cpu drives them. Prints statements a run (and commits a
 * run, from the COMMITs counted) per workload, and the statements of one run each (>= 0.02 a run)
 * on stderr, most first. A count does not move with the machine's load (the batching of the group
 * commit does a little: how many runs share a commit). BENCH_BEFORE_ROOT=<dir> counts an earlier
 * build the same way, its figures the baseline.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/run-statements.bench.ts
 */
import { measureRuns, report, startApp, startHelloServer } from './lib/bench-kit';
import { branching, ONE_PROCESS_RUNS_ENV, webhookSet } from './lib/run-workflows';
import { perRun, statementCounter } from './lib/statement-count';

const BENCH = 'run-statements';
const RUNS = Number(process.env.BENCH_RUNS ?? 1000);
const INPUT = { query: 'what is a vector', collection: 'col_1' };

async function count(root: string | undefined, upstream: string): Promise<Map<string, { statements: number; commits: number }>> {
  const counter = statementCounter();
  const app = await startApp({ ...ONE_PROCESS_RUNS_ENV, ...counter.env }, counter.nodeOptions, root);
  const figures = new Map<string, { statements: number; commits: number }>();
  try {
    for (const [label, definition] of [
      ['webhook_set', webhookSet()],
      ['branching', branching(upstream)],
    ] as const) {
      const before = await counter.of(app.child.pid!);
      await measureRuns(app.url, `${label}-${Date.now()}`, definition, INPUT, { runs: RUNS, connections: 50 });
      const each = [...perRun(before, await counter.of(app.child.pid!), RUNS)].sort((a, b) => b[1] - a[1]);
      const statements = each.reduce((sum, [, n]) => sum + n, 0);
      const commits = each.find(([sql]) => sql === 'COMMIT')?.[1] ?? 0;
      process.stderr.write(`${root ?? 'this build'}, ${label}: ${statements.toFixed(2)} statements a run\n`);
      for (const [sql, n] of each) if (n >= 0.02) process.stderr.write(`${n.toFixed(2).padStart(7)}  ${sql}\n`);
      figures.set(label, { statements, commits });
    }
  } finally {
    await app.stop();
    counter.remove();
  }
  return figures;
}

async function main(): Promise<void> {
  const hello = await startHelloServer();
  try {
    const beforeRoot = process.env.BENCH_BEFORE_ROOT;
    const before = beforeRoot ? await count(beforeRoot, hello.url) : undefined;
    const after = await count(undefined, hello.url);
    for (const [label, figure] of after) {
      for (const metric of ['statements', 'commits'] as const) {
        const baseline = before?.get(label)?.[metric] ?? null;
        report({
          bench: BENCH,
          metric: `${label}_${metric}_per_run`,
          value: figure[metric],
          unit: metric,
          baseline,
          ratio: baseline ? figure[metric] / baseline : null,
          target: 'fewer',
        });
      }
    }
  } finally {
    await hello.stop();
  }
}

void main();
