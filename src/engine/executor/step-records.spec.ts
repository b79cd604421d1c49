import webhookTrigger from '../../../plugins/webhook-trigger';
import { defineNode } from '../../sdk';
import { stepJson, type StepRecord } from '../../domain/step.model';
import type { WorkflowDefinition, WorkflowNodeSpec } from '../../domain/workflow-definition.model';
import { ExpressionEngine } from '../expressions/expression-engine';
import { NodeRegistry } from '../node-registry';
import { registerDefinition } from '../plugin-loader';
import { Redactor } from '../redactor';
import type { RunOutcome } from './run-contract';
import { boundOutput } from './step-records';
import { compileWorkflow } from '../workflow-compiler';
import { offlineExecutor } from '../../../test/utils/offline-executor';

class NoParams {}

/** How often the value `make` outputs was serialised. */
let serialised = 0;

const make = defineNode({
  type: 'make',
  version: 1,
  displayName: 'Make',
  description: 'Outputs a new object that counts its serialisations',
  parameters: NoParams,
  defaultRunMode: 'input',
  execute: () => {
    const made = { n: 1 };
    Object.defineProperty(made, 'toJSON', { value: () => (serialised++, { n: made.n }) });
    return made;
  },
});

const bump = defineNode({
  type: 'bump',
  version: 1,
  displayName: 'Bump',
  description: 'Changes what it received, in place, and outputs it',
  parameters: NoParams,
  defaultRunMode: 'input',
  execute: (ctx) => {
    const received = (ctx.runMode === 'input' ? ctx.input : ctx.item) as { n: number };
    received.n++;
    return received;
  },
});

const done = defineNode({
  type: 'done',
  version: 1,
  displayName: 'Done',
  description: 'Outputs a constant',
  parameters: NoParams,
  defaultRunMode: 'input',
  execute: () => 'done',
});

const registry = new NodeRegistry([
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(make, 'make'),
  registerDefinition(bump, 'bump'),
  registerDefinition(done, 'done'),
]);

function chain(...types: string[]): WorkflowDefinition {
  const nodes: WorkflowNodeSpec[] = [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    ...types.map((type) => ({ id: type, type, parameters: {} })),
  ];
  return { nodes, edges: nodes.slice(1).map((n, i) => ({ from: nodes[i].id, to: n.id })), variables: [] };
}

let expressions: ExpressionEngine;

beforeAll(() => {
  expressions = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 500 });
});

afterAll(async () => {
  await expressions.close();
});

async function run(definition: WorkflowDefinition): Promise<Record<string, StepRecord>> {
  return (await runWith(definition, Redactor.NONE)).steps;
}

async function runWith(
  definition: WorkflowDefinition,
  redactor: Redactor,
): Promise<{ steps: Record<string, StepRecord>; outcome: RunOutcome }> {
  const executor = offlineExecutor(expressions);
  const steps: Record<string, StepRecord> = {};
  const outcome = await executor.run(
    compileWorkflow(definition, registry),
    { runId: 'run_1', workflowId: 'wfl_1', actingUserId: 'usr_1', input: { q: 'hi' }, variables: {}, redactor },
    { finished: (step) => void (steps[step.nodeId] = step), started: async () => undefined },
  );
  expect(outcome.status).toBe('succeeded');
  return { steps, outcome };
}

describe('step records', () => {
  beforeEach(() => {
    serialised = 0;
  });

  it("serialises a node's output once when the next node's input is that very value", async () => {
    const steps = await run(chain('make', 'done'));
    expect(serialised).toBe(1);
    expect(stepJson(steps.make, 'output')).toBe('{"n":1}');
    expect(stepJson(steps.done, 'input')).toBe('{"n":1}');
  });

  it('serialises a value again once a node ran, which may have changed it', async () => {
    const steps = await run(chain('make', 'bump', 'done'));
    expect(stepJson(steps.make, 'output')).toBe('{"n":1}');
    expect(stepJson(steps.bump, 'input')).toBe('{"n":1}');
    expect(stepJson(steps.bump, 'output')).toBe('{"n":2}');
    expect(stepJson(steps.done, 'input')).toBe('{"n":2}');
  });

  it("does not serialise the run's output again when it is the last step's output, as recorded", async () => {
    const { steps, outcome } = await runWith(chain('make'), Redactor.NONE);
    // As the run worker keeps it: masked (nothing to mask here), then bounded.
    const kept = boundOutput(outcome, Redactor.NONE.value(outcome.output));
    expect(serialised).toBe(1);
    expect(kept).toBe(outcome.output);
    expect(outcome.outputText).toBe('{"n":1}');
    expect(stepJson(steps.make, 'output')).toBe(outcome.outputText);
  });

  it("serialises the run's output again when masking changed it", async () => {
    const redactor = new Redactor(['secret']);
    const { outcome } = await runWith(chain('make'), redactor);
    const kept = boundOutput(outcome, redactor.value(outcome.output));
    expect(kept).not.toBe(outcome.output);
    expect(kept).toEqual({ n: 1 });
    expect(outcome.outputText).toBeUndefined();
  });
});
