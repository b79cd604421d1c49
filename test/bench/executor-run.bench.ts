/**
 * The executor's own cost of one run, with no HTTP server, store or queue around it: webhook -> set
 * and webhook -> if -> set -> http-request (a fetcher that answers at once), the listener sealing
 * kept states when the run worker's step recorder does. Prints CPU a run; for instructions a run, run it under
 * callgrind twice (BENCH_RUNS=0 and BENCH_RUNS=N, one of BENCH_WORKFLOWS=set or branching) and
 * divide the difference by N, with node's --single-threaded: V8's compiler and marker threads
 * otherwise land in the counts, which then differ by more than the changes measured.
 *
 *   BENCH_RUNS=20000 node --no-node-snapshot -r ./scripts/swc-register.js test/bench/executor-run.bench.ts
 */
import pino from 'pino';
import httpRequest from '../../plugins/http-request';
import ifNode from '../../plugins/if';
import set from '../../plugins/set';
import stopAndError from '../../plugins/stop-and-error';
import webhookTrigger from '../../plugins/webhook-trigger';
import { SecretCipher } from '../../src/common/secret-cipher';
import type { StepRecord } from '../../src/domain/step.model';
import { ExpressionEngine } from '../../src/engine/expressions/expression-engine';
import { UnavailableCollectionsProvider } from '../../src/engine/node-collections.port';
import { NodeRegistry } from '../../src/engine/node-registry';
import { registerDefinition } from '../../src/engine/plugin-loader';
import { Redactor } from '../../src/engine/redactor';
import { compileWorkflow } from '../../src/engine/workflow-compiler';
import { KeptOutputs, sealOutputs, WorkflowExecutor } from '../../src/engine/workflow-executor';
import { stateSealer } from '../../src/runs/state-sealer';
import { report } from './lib/bench-kit';
import { branching, webhookSet } from './lib/run-workflows';

const BENCH = 'executor-run';
const RUNS = Number(process.env.BENCH_RUNS ?? 20_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2_000);
/** Which workflows to run (comma-separated names of `plans`); all by default. */
const ONLY = process.env.BENCH_WORKFLOWS?.split(',');

const registry = new NodeRegistry([
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(ifNode, 'if'),
  registerDefinition(set, 'set'),
  registerDefinition(httpRequest, 'http-request'),
  registerDefinition(stopAndError, 'stop-and-error'),
]);

async function main() {
  const expressions = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 64, timeoutMs: 1000 });
  const answer = Buffer.from('{"ok":true,"results":[{"id":"p_1","score":0.9}]}');
  const executor = new WorkflowExecutor({
    expressions,
    fetcher: { fetch: async (url) => ({ status: 200, url, headers: { 'content-type': 'application/json' }, body: answer }) },
    collections: new UnavailableCollectionsProvider(),
    logger: pino({ level: 'silent' }),
    runTimeoutMs: 10 * 60_000,
  });
  const sealer = stateSealer(SecretCipher.fromKey(Buffer.alloc(32, 7)), 'wfl_bench');
  // As the run worker's step recorder: kept outputs are sealed when the next node that must be
  // preceded by stored records starts; the last node's (a run that succeeds) never are.
  let sealedChars = 0;
  const pending: KeptOutputs[] = [];
  const sealPending = async () => {
    for (const kept of pending.splice(0)) sealedChars += sealOutputs(sealer, kept)?.length ?? 0;
  };
  const listener = {
    finished: (_step: StepRecord, kept?: KeptOutputs) => void (kept && pending.push(kept)),
    started: sealPending,
    starting: sealPending,
  };
  const input = { query: 'what is a vector', collection: 'col_1' };
  // The definitions the HTTP benches post as JSON, whose literal types are wider than the compiler's.
  type Definition = Parameters<typeof compileWorkflow>[0];
  const plans = {
    set: compileWorkflow({ ...webhookSet(), variables: [] } as Definition, registry),
    branching: compileWorkflow({ ...branching('http://upstream.test'), variables: [] } as Definition, registry),
  };
  try {
    for (const [name, plan] of Object.entries(plans)) {
      if (ONLY && !ONLY.includes(name)) continue;
      const once = async (i: number) => {
        // As the run worker calls it: a controller of the run's own, which the run's time limit aborts.
        const controller = new AbortController();
        const outcome = await executor.run(
          plan,
          {
            runId: `run_${i}`,
            workflowId: 'wfl_bench',
            actingUserId: 'usr_bench',
            input,
            variables: {},
            redactor: Redactor.NONE,
            signal: controller.signal,
            abort: (reason) => controller.abort(reason),
          },
          listener,
        );
        pending.length = 0;
        if (outcome.status !== 'succeeded') throw new Error(`${name}: ${outcome.status} ${JSON.stringify(outcome.error)}`);
      };
      for (let i = 0; i < WARMUP; i++) await once(i);
      const cpu = process.cpuUsage();
      for (let i = 0; i < RUNS; i++) await once(i);
      const used = process.cpuUsage(cpu);
      if (RUNS) {
        const us = (used.user + used.system) / RUNS;
        report({
          bench: BENCH,
          metric: `${name}_cpu_per_run`,
          value: us,
          unit: 'us',
          baseline: null,
          ratio: null,
          target: 'informational',
        });
      }
    }
  } finally {
    await expressions.close();
  }
  if (sealedChars < 0) console.log(sealedChars);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
