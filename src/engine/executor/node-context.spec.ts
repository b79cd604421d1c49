import { setFlagsFromString } from 'node:v8';
import pino from 'pino';
import { runInThisContext } from 'node:vm';
import webhookTrigger from '../../../plugins/webhook-trigger';
import { defineNode, type NodeContext } from '../../sdk';
import type { WorkflowDefinition } from '../../domain/workflow-definition.model';
import { ExpressionEngine } from '../expressions/expression-engine';
import { NodeRegistry } from '../node-registry';
import { registerDefinition } from '../plugin-loader';
import { Redactor } from '../redactor';
import { UnavailableCollectionsProvider } from '../node-collections.port';
import { compileWorkflow } from '../workflow-compiler';
import { WorkflowExecutor } from '../workflow-executor';
import { offlineExecutor } from '../../../test/utils/offline-executor';

// V8's own answer to whether an object keeps fast properties (not a dictionary): a node reads `ctx` often.
// Its intrinsic parses only in code compiled after the flag is set.
setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = runInThisContext('(object) => %HasFastProperties(object)') as (object: object) => boolean;

class NoParams {}

const seen: NodeContext<object>[] = [];
const capture = defineNode({
  type: 'capture',
  version: 1,
  displayName: 'Capture',
  description: 'Keeps its ctx',
  parameters: NoParams,
  defaultRunMode: 'input',
  execute: (ctx) => void seen.push(ctx),
});

const registry = new NodeRegistry([registerDefinition(webhookTrigger, 'webhook-trigger'), registerDefinition(capture, 'capture')]);

let expressions: ExpressionEngine;

beforeAll(() => {
  expressions = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 500 });
});

afterAll(async () => {
  await expressions.close();
});

async function contexts(runMode: 'input' | 'item', input: unknown): Promise<NodeContext<object>[]> {
  seen.length = 0;
  const definition: WorkflowDefinition = {
    nodes: [
      { id: 'trigger', type: 'webhook-trigger', parameters: {} },
      { id: 'look', type: 'capture', runMode, parameters: {} },
    ],
    edges: [{ from: 'trigger', to: 'look' }],
    variables: [],
  };
  const executor = offlineExecutor(expressions);
  const outcome = await executor.run(
    compileWorkflow(definition, registry),
    { runId: 'run_1', workflowId: 'wfl_1', actingUserId: 'usr_1', input, variables: {}, redactor: Redactor.NONE },
    { finished: () => undefined, started: async () => undefined },
  );
  expect(outcome.status).toBe('succeeded');
  return [...seen];
}

const COMMON = [
  'params',
  'variables',
  'nodes',
  'inputs',
  'collections',
  'logger',
  'workflows',
  'approvals',
  'progress',
  'memory',
  'sandbox',
  'models',
  'http',
  'mcp',
  'mask',
  'signal',
  'runId',
  'workflowId',
  'nodeId',
];

describe('ctx', () => {
  it("holds the binding's fields, then every facility, as an object with fast properties", async () => {
    const [ctx] = await contexts('input', { q: 'hi' });
    expect(Object.keys(ctx)).toEqual(['runMode', 'input', ...COMMON]);
    expect(ctx).toMatchObject({ runMode: 'input', input: { q: 'hi' }, runId: 'run_1', workflowId: 'wfl_1', nodeId: 'look' });
    expect(hasFastProperties(ctx)).toBe(true);
  });

  it('holds an item and its index in run mode item', async () => {
    const all = await contexts('item', ['a', 'b']);
    expect(all.map((ctx) => Object.keys(ctx))).toEqual([
      ['runMode', 'item', 'itemIndex', ...COMMON],
      ['runMode', 'item', 'itemIndex', ...COMMON],
    ]);
    expect(all.map((ctx) => ctx.runMode === 'item' && [ctx.item, ctx.itemIndex])).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
    expect(all.every(hasFastProperties)).toBe(true);
  });

  it("shares the run's collections and sandbox across its nodes rather than make them for each", async () => {
    seen.length = 0;
    const definition: WorkflowDefinition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'one', type: 'capture', parameters: {} },
        { id: 'two', type: 'capture', parameters: {} },
      ],
      edges: [
        { from: 'trigger', to: 'one' },
        { from: 'one', to: 'two' },
      ],
      variables: [],
    };
    // A provider that makes a facade each time it is asked, as the service's does, and a sandbox.
    let facades = 0;
    const unavailable = new UnavailableCollectionsProvider();
    const executor = new WorkflowExecutor({
      expressions,
      fetcher: { fetch: () => Promise.reject(new Error('no network in this test')) },
      collections: { forUser: () => (facades++, { ...unavailable.forUser() }) },
      sandbox: { run: async () => null },
      logger: pino({ level: 'silent' }),
      runTimeoutMs: 30_000,
    });
    const outcome = await executor.run(
      compileWorkflow(definition, registry),
      { runId: 'run_1', workflowId: 'wfl_1', actingUserId: 'usr_1', input: {}, variables: {}, redactor: Redactor.NONE },
      { finished: () => undefined, started: async () => undefined },
    );
    expect(outcome.status).toBe('succeeded');
    const [first, second] = seen;
    expect([first.nodeId, second.nodeId]).toEqual(['one', 'two']);
    expect(facades).toBe(1);
    expect(first.collections).toBe(second.collections);
    expect(first.sandbox).toBe(second.sandbox);
    expect(first.mask).toBe(second.mask);
  });

  it("shares the run's mask across tries rather than make one a try", async () => {
    const [first, second] = await contexts('item', ['a', 'b']);
    expect(first.mask).toBe(second.mask);
    expect(first.mask({ q: 'hi' })).toEqual({ q: 'hi' });
  });
});
