/**
 * Issue 11's figures.
 * (a) Completed runs/s of webhook -> if -> set -> http-request, against webhook -> http-request
 *     (two nodes) in the same run on the same app; target ratio >= 0.7.
 * (b) Code node evaluation p50 (a small realistic body through ctx.sandbox) against one
 *     expression evaluation p50 in the same isolates; target ratio <= 3.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/control-flow.bench.ts
 */
import { ExpressionEngine } from '../../src/engine/expressions/expression-engine';
import { IsolateCodeSandbox } from '../../src/engine/expressions/isolate-code-sandbox.adapter';
import { measureRuns, percentile, report, startApp, startHelloServer } from './lib/bench-kit';
import { branching, twoNodes } from './lib/run-workflows';

const BENCH = 'control-flow';
const CONNECTIONS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const SAMPLES = 20_000;
const WARMUP = 2_000;

async function runsPerSecond(): Promise<void> {
  const upstream = await startHelloServer();
  const app = await startApp({ APP_ROLE: 'all', FETCH_ALLOWED_HOSTS: '127.0.0.1', JOB_CONCURRENCY: '64', SWAGGER_ENABLED: 'false' });
  try {
    const input = { query: 'what is a vector', collection: 'col_1' };
    const options = { runs: RUNS, connections: CONNECTIONS };
    const two = await measureRuns(app.url, 'webhook -> http-request', twoNodes(upstream.url), input, options);
    const four = await measureRuns(app.url, 'webhook -> if -> set -> http-request', branching(upstream.url), input, options);
    if (two.failed || four.failed) throw new Error(`runs failed: two-node ${two.failed}, branching ${four.failed}`);
    report({
      bench: BENCH,
      metric: 'branching_runs_per_s',
      value: four.runsPerSecond,
      unit: 'runs/s',
      baseline: two.runsPerSecond,
      ratio: four.runsPerSecond / two.runsPerSecond,
      target: '>= 0.7 of the two-node workflow',
    });
  } finally {
    await app.stop();
    await upstream.stop();
  }
}

async function codeVersusExpression(): Promise<void> {
  const engine = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 32, timeoutMs: 1000 });
  const sandbox = new IsolateCodeSandbox(engine);
  const signal = new AbortController().signal;
  const rows = Array.from({ length: 20 }, (_, i) => ({ id: `ord_${i}`, total: i * 13, customer: { name: `C${i}` } }));
  const code =
    'const big = input.filter((row) => row.total > 100);\nreturn { count: big.length, ids: big.map((row) => row.id), sum: big.reduce((a, row) => a + row.total, 0) };';
  const expression = 'input.filter((row) => row.total > 100).length';
  const time = async (run: () => Promise<unknown>) => {
    const samples: number[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const start = process.hrtime.bigint();
      await run();
      if (i >= WARMUP) samples.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    return percentile(
      samples.sort((a, b) => a - b),
      50,
    );
  };
  try {
    // The scope of a run's node: a fresh input each time, as items differ.
    const expressionP50 = await time(() => engine.evaluate(expression, { input: rows.map((r) => ({ ...r })) }));
    const codeP50 = await time(() => sandbox.run(code, { input: rows.map((r) => ({ ...r })), variables: {}, nodes: {} }, signal));
    // A condition without a call, which runs in the service's process (bounded-expression.ts).
    const boundedP50 = await time(() => engine.evaluate('input[3].total > 100', { input: rows.map((r) => ({ ...r })) }));
    console.log(
      `expression p50 ${expressionP50.toFixed(1)} us; code node p50 ${codeP50.toFixed(1)} us; bounded expression p50 ${boundedP50.toFixed(1)} us`,
    );
    report({
      bench: BENCH,
      metric: 'bounded_expression_p50',
      value: boundedP50,
      unit: 'us',
      baseline: null,
      ratio: null,
      target: 'informational',
    });
    report({
      bench: BENCH,
      metric: 'code_node_p50',
      value: codeP50,
      unit: 'us',
      baseline: expressionP50,
      ratio: codeP50 / expressionP50,
      target: '<= 3x an expression evaluation',
    });
  } finally {
    await engine.close();
  }
}

async function main() {
  await codeVersusExpression();
  await runsPerSecond();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
