/**
 * Cost of one expression evaluation, against a plain in-process function call measured in the
 * same run. Target: median of `input.a + input.b` <= 25 us. `input.a + input.b` is a bounded
 * expression (bounded-expression.ts), run in the service's process; the "sandbox process path"
 * figures are of an expression with a call, which runs in a sandbox process.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/expressions.bench.ts
 */
import { ExpressionEngine } from '../../src/engine/expressions/expression-engine';

const BENCH = 'expressions';
const TARGET_MEDIAN_US = 25;
const SOURCE = 'input.a + input.b';
/** Costly once (input.slow), which keeps it on the engine's asynchronous path for good. */
const LONG_RUNNING_SOURCE =
  'input.slow ? (() => { const end = Date.now() + 20; while (Date.now() < end); return 0; })() : input.a + input.b';
/** The same sum with a call in it, which a sandbox process runs. */
const CALLING_SOURCE = '[input.a].map((a) => a + input.b)[0]';
const WARMUP = 3_000;
const SAMPLES = 20_000;
const IN_FLIGHT = 64;
const BASELINE_BATCH = 1_000;

interface Figure {
  metric: string;
  value: number;
  unit: string;
  baseline: number | null;
  target: number | null;
}

function report(figure: Figure, label: string): void {
  const ratio = figure.baseline ? round(figure.value / figure.baseline) : null;
  console.log(
    `${label}: ${round(figure.value)} ${figure.unit}${ratio === null ? '' : ` (${ratio}x baseline ${round(figure.baseline!)} ${figure.unit})`}`,
  );
  console.log(
    JSON.stringify({
      bench: BENCH,
      metric: figure.metric,
      value: round(figure.value),
      unit: figure.unit,
      baseline: figure.baseline === null ? null : round(figure.baseline),
      ratio,
      target: figure.target,
    }),
  );
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function microsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1000;
}

/**
 * Per-call cost of the same computation as a plain function; timed in batches, as one call is
 * below the clock's resolution.
 */
function plainCallMicros(): number[] {
  const plain = (scope: { input: { a: number; b: number } }) => scope.input.a + scope.input.b;
  const perCall: number[] = [];
  let sink = 0;
  for (let batch = 0; batch < (WARMUP + SAMPLES) / 10; batch++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < BASELINE_BATCH; i++) sink += plain({ input: { a: i, b: batch } });
    if (batch * 10 >= WARMUP) perCall.push(microsSince(start) / BASELINE_BATCH);
  }
  if (sink === -1) console.log(sink);
  return perCall.sort((a, b) => a - b);
}

/** `count` evaluations, IN_FLIGHT at a time, which keeps every isolate of the pool busy. */
async function evaluateConcurrently(engine: ExpressionEngine, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const i = next++;
        if ((await engine.evaluate(SOURCE, { input: { a: i, b: 1 } })) !== i + 1) throw new Error(`wrong result for ${i}`);
      }
    }),
  );
}

/** Sorted times of `count` evaluations of `source` (a sum of input.a and input.b), after a warmup. */
async function sumMicros(engine: ExpressionEngine, source: string, count: number): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await engine.evaluate(source, { input: { a: i, b: 1 } });
  const micros: number[] = [];
  for (let i = 0; i < count; i++) {
    const scope = { input: { a: i, b: 1 } };
    const start = process.hrtime.bigint();
    const result = await engine.evaluate(source, scope);
    micros.push(microsSince(start));
    if (result !== i + 1) throw new Error(`wrong result ${String(result)} for ${i}`);
  }
  return micros.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const engine = new ExpressionEngine({ poolSize: 2, memoryLimitMb: 32, timeoutMs: 1000 });
  try {
    let start = process.hrtime.bigint();
    await engine.evaluate(SOURCE, { input: { a: 1, b: 2 } });
    report(
      { metric: 'first_evaluation_us', value: microsSince(start), unit: 'us', baseline: null, target: null },
      'first evaluation (isolate + compile)',
    );

    const compileMicros: number[] = [];
    for (let i = 0; i < 200; i++) {
      start = process.hrtime.bigint();
      await engine.evaluate(`input.a + input.b + ${i}`, { input: { a: 1, b: 2 } });
      compileMicros.push(microsSince(start));
    }
    compileMicros.sort((a, b) => a - b);

    const evaluateMicros = await sumMicros(engine, SOURCE, SAMPLES);

    await evaluateConcurrently(engine, WARMUP);
    start = process.hrtime.bigint();
    await evaluateConcurrently(engine, SAMPLES);
    const concurrentMicros = microsSince(start) / SAMPLES;

    await engine.evaluate(LONG_RUNNING_SOURCE, { input: { slow: true } });
    const asyncPathMicros = await sumMicros(engine, LONG_RUNNING_SOURCE, SAMPLES / 4);
    const callingMicros = await sumMicros(engine, CALLING_SOURCE, SAMPLES / 4);

    const plain = plainCallMicros();
    const plainMedian = percentile(plain, 0.5);
    const plainP99 = percentile(plain, 0.99);

    report(
      { metric: 'evaluate_median_us', value: percentile(evaluateMicros, 0.5), unit: 'us', baseline: plainMedian, target: TARGET_MEDIAN_US },
      `evaluate "${SOURCE}" median`,
    );
    report(
      { metric: 'evaluate_p99_us', value: percentile(evaluateMicros, 0.99), unit: 'us', baseline: plainP99, target: null },
      `evaluate "${SOURCE}" p99`,
    );
    report(
      { metric: 'evaluate_concurrent_us_per_op', value: concurrentMicros, unit: 'us', baseline: plainMedian, target: null },
      `evaluate with ${IN_FLIGHT} in flight, per evaluation`,
    );
    report(
      { metric: 'async_path_median_us', value: percentile(asyncPathMicros, 0.5), unit: 'us', baseline: plainMedian, target: null },
      'program kept on the async path (costly once), median',
    );
    report(
      { metric: 'async_path_p99_us', value: percentile(asyncPathMicros, 0.99), unit: 'us', baseline: plainP99, target: null },
      'program kept on the async path, p99',
    );
    report(
      { metric: 'process_path_median_us', value: percentile(callingMicros, 0.5), unit: 'us', baseline: plainMedian, target: null },
      `evaluate "${CALLING_SOURCE}" (sandbox process path) median`,
    );
    report(
      { metric: 'process_path_p99_us', value: percentile(callingMicros, 0.99), unit: 'us', baseline: plainP99, target: null },
      `evaluate "${CALLING_SOURCE}" (sandbox process path) p99`,
    );
    report(
      { metric: 'compile_and_evaluate_median_us', value: percentile(compileMicros, 0.5), unit: 'us', baseline: plainMedian, target: null },
      'new source (parse + compile + evaluate) median',
    );
    report({ metric: 'plain_call_median_us', value: plainMedian, unit: 'us', baseline: null, target: null }, 'plain function call median');
  } finally {
    await engine.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
