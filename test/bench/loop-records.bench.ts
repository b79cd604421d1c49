/**
 * What a loop costs to record: the characters of step records the executor hands to the worker
 * (what it writes to the run store) and the time, for a loop of N iterations against one of N/4,
 * over a body of two nodes, one of which must not run twice (so it is marked before each start).
 * Linear recording gives a ratio of about 4 for both; rewriting every record after each
 * iteration gave about 16.
 *
 *   npm run bench -- loop-records
 */
import pino from 'pino';
import effect from '../../plugins/http-request';
import loop from '../../plugins/loop';
import set from '../../plugins/set';
import webhookTrigger from '../../plugins/webhook-trigger';
import { UnavailableCollectionsProvider } from '../../src/engine/node-collections.port';
import { ExpressionEngine } from '../../src/engine/expressions/expression-engine';
import { NodeRegistry } from '../../src/engine/node-registry';
import { registerDefinition } from '../../src/engine/plugin-loader';
import { Redactor } from '../../src/engine/redactor';
import { compileWorkflow } from '../../src/engine/workflow-compiler';
import { WorkflowExecutor } from '../../src/engine/workflow-executor';
import type { StepRecord } from '../../src/domain/step.model';
import { report } from './lib/bench-kit';

const BENCH = 'loop-records';
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 4000);

const registry = new NodeRegistry([
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(loop, 'loop'),
  registerDefinition(set, 'set'),
  registerDefinition(effect, 'http-request'),
]);

/** POSTs to a fetcher that answers at once: a node that must not run twice, with no network. */
const definition = {
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    { id: 'each', type: 'loop', parameters: { batchSize: 1 } },
    { id: 'shape', type: 'set', runMode: 'item' as const, parameters: { fields: { source: 'bench' } } },
    {
      id: 'send',
      type: 'http-request',
      parameters: { method: 'POST', url: 'http://upstream.test/items', body: 'input' },
      parameterMode: { body: 'expression' as const },
    },
  ],
  edges: [
    { from: 'trigger', to: 'each' },
    { from: 'each', to: 'shape', output: 'loop' },
    { from: 'shape', to: 'send' },
    { from: 'send', to: 'each' },
  ],
  variables: [],
};

async function measure(executor: WorkflowExecutor, iterations: number): Promise<{ chars: number; ms: number }> {
  let chars = 0;
  const count = (step: StepRecord) => void (chars += JSON.stringify(step).length);
  const plan = compileWorkflow(definition, registry);
  const input = Array.from({ length: iterations }, (_, i) => ({ id: `item_${i}`, text: 'a few words of an item to send' }));
  const started = performance.now();
  const outcome = await executor.run(
    plan,
    { runId: `run_${iterations}`, workflowId: 'wfl_bench', actingUserId: 'usr_bench', input, variables: {}, redactor: Redactor.NONE },
    { finished: count, started: async (step) => count(step) },
  );
  const ms = performance.now() - started;
  if (outcome.status !== 'succeeded') throw new Error(`the loop ${outcome.status}: ${JSON.stringify(outcome.error)}`);
  console.log(`${iterations} iterations: ${(chars / 1e6).toFixed(1)} MB of step records in ${ms.toFixed(0)} ms`);
  return { chars, ms };
}

async function main() {
  const expressions = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 64, timeoutMs: 1000 });
  const executor = new WorkflowExecutor({
    expressions,
    fetcher: {
      fetch: async (url) => ({ status: 200, url, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"ok":true}') }),
    },
    collections: new UnavailableCollectionsProvider(),
    logger: pino({ level: 'silent' }),
    runTimeoutMs: 10 * 60_000,
  });
  try {
    await measure(executor, 100);
    const small = await measure(executor, ITERATIONS / 4);
    const large = await measure(executor, ITERATIONS);
    report({
      bench: BENCH,
      metric: 'recorded_chars',
      value: large.chars,
      unit: 'chars',
      baseline: small.chars,
      ratio: large.chars / small.chars,
      target: '<= 5 for 4x the iterations (linear)',
    });
    report({
      bench: BENCH,
      metric: 'run_ms',
      value: large.ms,
      unit: 'ms',
      baseline: small.ms,
      ratio: large.ms / small.ms,
      target: '<= 5 for 4x the iterations (linear)',
    });
  } finally {
    await expressions.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
