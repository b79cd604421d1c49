/**
 * What linear-time patterns cost (schemaProblems: ajv with RE2 through re2js, within a budget per
 * check), against ajv with V8's backtracking RegExp measured in the same run, on the fields an
 * approval or a tool call usually carries; and the worst single check an attacker can ask for,
 * against which the budget is set. Targets: a usual check <= 50 us at the median; the worst check
 * (a pattern that defeats RE2's DFA, with the longest value the budget lets through, or a value at
 * the body limit, which the budget refuses) <= 250 ms, the stall the event-loop test allows, where
 * V8 takes seconds for 29 characters against ^(a+)+$ (measured here on 22).
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/schema-patterns.bench.ts
 */
import Ajv from 'ajv';
import { schemaProblems } from '../../src/sdk';
import { percentile, report } from './lib/bench-kit';

const BENCH = 'schema-patterns';
const SAMPLES = 20_000;
const SCHEMA = {
  type: 'object',
  properties: {
    email: { type: 'string', pattern: '^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$' },
    order: { type: 'string', pattern: '^ORD-\\d{4,10}$' },
    note: { type: 'string', pattern: '^[\\p{L}\\p{N}\\s.,!?-]*$', maxLength: 500 },
  },
  required: ['email', 'order'],
};
const VALUE = { email: 'ada.lovelace@example.com', order: 'ORD-20481', note: 'Ship it before Friday, please.' };

function median(run: () => void): number {
  for (let i = 0; i < 2_000; i++) run();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const start = process.hrtime.bigint();
    run();
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

const backtracking = new Ajv({ allErrors: true, strict: false }).compile(SCHEMA);
const baseline = median(() => backtracking(VALUE));
const linear = median(() => schemaProblems(SCHEMA, VALUE));
report({
  bench: BENCH,
  metric: 'usual check median',
  value: linear,
  unit: 'us',
  baseline,
  ratio: linear / baseline,
  target: '<= 50 us',
});

// The worst one check can cost: a DFA-defeating pattern and a value of a megabyte, stopped by the budget.
const worstSchema = { type: 'object', properties: { v: { type: 'string', pattern: '^[ab]*a[ab]{20}$' } } };
/** a and b in an order without a period (a fixed linear congruential sequence), which keeps RE2's DFA cache thrashing. */
const scrambled = (length: number) => {
  let state = 12345;
  let text = '';
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    text += state & 0x10000 ? 'a' : 'b';
  }
  return text;
};
const worstValue = { v: scrambled(1_000_000) };
let worst = 0;
for (let i = 0; i < 5; i++) {
  const start = process.hrtime.bigint();
  schemaProblems(worstSchema, worstValue);
  worst = Math.max(worst, Number(process.hrtime.bigint() - start) / 1e6);
}
// Under the budget's largest value, in the same run: what the budget lets through.
const underBudget = { v: scrambled(3_600) };
let allowed = 0;
for (let i = 0; i < 5; i++) {
  const start = process.hrtime.bigint();
  schemaProblems(worstSchema, underBudget);
  allowed = Math.max(allowed, Number(process.hrtime.bigint() - start) / 1e6);
}
// V8 on the report's 29 characters against ^(a+)+$, measured on 22 (each character doubles it).
const catastrophic = new Ajv({ strict: false }).compile({ type: 'string', pattern: '^(a+)+$' });
const started = process.hrtime.bigint();
catastrophic('a'.repeat(22) + '!');
const v8At22 = Number(process.hrtime.bigint() - started) / 1e6;
report({
  bench: BENCH,
  metric: 'worst check, 1 MB value refused by the budget',
  value: worst,
  unit: 'ms',
  baseline: v8At22,
  ratio: worst / v8At22,
  target: '<= 250 ms',
});
report({
  bench: BENCH,
  metric: 'worst check within the budget (3.6 KB value)',
  value: allowed,
  unit: 'ms',
  baseline: v8At22,
  ratio: allowed / v8At22,
  target: '<= 250 ms',
});
