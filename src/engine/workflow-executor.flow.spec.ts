import { IsBoolean, IsOptional, IsString } from 'class-validator';
import pino from 'pino';
import approval from '../../plugins/approval';
import loop from '../../plugins/loop';
import respond from '../../plugins/respond';
import wait from '../../plugins/wait';
import webhookTrigger from '../../plugins/webhook-trigger';
import { defineNode, NodeConfigurationError, Parameter, toOutput } from '../sdk';
import type { StepRecord } from '../domain/step.model';
import { WorkflowDefinition, WorkflowEdge, WorkflowNodeSpec } from '../domain/workflow-definition.model';
import { UnavailableCollectionsProvider } from './node-collections.port';
import { ExpressionEngine } from './expressions/expression-engine';
import { NodeRegistry } from './node-registry';
import { registerDefinition } from './plugin-loader';
import { REDACTED, Redactor } from './redactor';
import { RunInterrupt } from './run-interrupt';
import { compileWorkflow } from './workflow-compiler';
import { RunRequest, sealOutputs, StateSealer, WorkflowExecutor } from './workflow-executor';
import { MAX_LOOP_ITERATIONS } from './executor/loop-runner';

class RouteParams {
  @Parameter({ description: 'Where to send the input' })
  @IsBoolean()
  yes: boolean = true;
}

/** Sends its input (or each item) to `yes` or `no`. */
const route = defineNode({
  type: 'route',
  version: 1,
  displayName: 'Route',
  description: 'Test router',
  parameters: RouteParams,
  defaultRunMode: 'input',
  outputs: ['yes', 'no'],
  execute: (ctx) => toOutput(ctx.params.yes ? 'yes' : 'no', ctx.runMode === 'input' ? ctx.input : ctx.item),
});

class TagParams {
  @Parameter({ description: 'A label' })
  @IsOptional()
  @IsString()
  tag?: string;

  @Parameter({ description: 'Fail instead' })
  @IsOptional()
  @IsBoolean()
  fail?: boolean;
}

const calls: string[] = [];

/** Records that it ran; outputs its tag, its input and what its incoming edges were. */
const tag = defineNode({
  type: 'tag',
  version: 1,
  displayName: 'Tag',
  description: 'Test node',
  parameters: TagParams,
  defaultRunMode: 'input',
  execute: (ctx) => {
    calls.push(ctx.nodeId);
    if (ctx.params.fail) throw new NodeConfigurationError(`${ctx.nodeId} was told to fail`);
    return {
      tag: ctx.params.tag ?? ctx.nodeId,
      got: ctx.runMode === 'input' ? ctx.input : ctx.item,
      inputs: ctx.inputs.map((i) => `${i.from}.${i.output}:${i.live}`),
    };
  },
});

/** A node with a side effect: it must not run twice. */
const effect = defineNode({
  type: 'effect',
  version: 1,
  displayName: 'Effect',
  description: 'Test side effect',
  parameters: TagParams,
  defaultRunMode: 'input',
  idempotent: false,
  execute: (ctx) => {
    calls.push(ctx.nodeId);
    return { sent: ctx.runMode === 'input' ? ctx.input : ctx.item };
  },
});

const registry = new NodeRegistry([
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(route, 'route'),
  registerDefinition(tag, 'tag'),
  registerDefinition(effect, 'effect'),
  registerDefinition(loop, 'loop'),
  registerDefinition(wait, 'wait'),
  registerDefinition(respond, 'respond'),
  registerDefinition(approval, 'approval'),
]);

const node = (
  id: string,
  type: string,
  parameters: Record<string, unknown> = {},
  extra: Partial<WorkflowNodeSpec> = {},
): WorkflowNodeSpec => ({ id, type, parameters, ...extra });
const edge = (from: string, to: string, output?: string): WorkflowEdge => ({ from, to, ...(output ? { output } : {}) });
const workflow = (nodes: WorkflowNodeSpec[], edges: WorkflowEdge[]): WorkflowDefinition => ({
  nodes: [node('trigger', 'webhook-trigger'), ...nodes],
  edges,
  variables: [],
});

/** Seals as JSON, as the worker does with encryption: what matters here is the round trip. */
const sealer: StateSealer = {
  seal: (value) => `sealed:${JSON.stringify(value)}`,
  open: (sealed) => JSON.parse(sealed.slice('sealed:'.length)),
};

let expressions: ExpressionEngine;
let counter = 0;
const original = { add: EventTarget.prototype.addEventListener, remove: EventTarget.prototype.removeEventListener };

async function run(definition: WorkflowDefinition, overrides: Partial<RunRequest> = {}) {
  const steps: StepRecord[] = [];
  const started: StepRecord[] = [];
  const executor = new WorkflowExecutor({
    expressions,
    fetcher: { fetch: () => Promise.reject(new Error('no network')) },
    collections: new UnavailableCollectionsProvider(),
    logger: pino({ level: 'silent' }),
    runTimeoutMs: 30_000,
    approvalLinks: { url: ({ runId, nodeId }) => `https://svc.test/approvals/${runId}.${nodeId}` },
  });
  const outcome = await executor.run(
    compileWorkflow(definition, registry),
    {
      runId: `run_${++counter}`,
      workflowId: 'wfl_1',
      actingUserId: 'usr_1',
      input: { n: 1 },
      variables: {},
      redactor: Redactor.NONE,
      sealer,
      ...overrides,
    },
    {
      finished: (step, kept) => void steps.push(kept ? { ...step, state: sealOutputs(sealer, kept) } : step),
      started: async (step) => void started.push(step),
    },
  );
  // The last record of a node is the one that stands (a loop body's are rewritten each iteration).
  const byId = Object.fromEntries(steps.map((s) => [s.nodeId, s]));
  return { ...outcome, byId, started };
}

beforeAll(() => {
  expressions = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 500 });
});
afterAll(() => expressions.close());
beforeEach(() => (calls.length = 0));

describe('WorkflowExecutor control flow', () => {
  it('has what finished before a node stored before the node starts: a lone write, or with the record of one that must not run twice', async () => {
    const outcome = await new WorkflowExecutor({
      expressions,
      fetcher: { fetch: () => Promise.reject(new Error('x')) },
      collections: new UnavailableCollectionsProvider(),
      logger: pino({ level: 'silent' }),
      runTimeoutMs: 10_000,
    }).run(
      compileWorkflow(
        workflow([node('a', 'tag'), node('b', 'effect'), node('c', 'tag')], [edge('trigger', 'a'), edge('a', 'b'), edge('b', 'c')]),
        registry,
      ),
      { runId: 'run_order', workflowId: 'w', actingUserId: 'u', input: null, variables: {}, redactor: Redactor.NONE, sealer },
      {
        finished: (s) => void calls.push(`finished:${s.nodeId}`),
        started: async (s) => void calls.push(`started:${s.nodeId}`),
        starting: async () => void calls.push('starting'),
      },
    );
    expect(outcome.status).toBe('succeeded');
    expect(calls).toEqual([
      'starting',
      'finished:trigger',
      'starting',
      'a',
      'finished:a',
      'started:b',
      'b',
      'finished:b',
      'starting',
      'c',
      'finished:c',
    ]);
  });

  it("passes a disabled node's input on unchanged from its first output, records it as skipped, and runs what follows", async () => {
    const result = await run(
      workflow(
        [node('a', 'tag'), node('off', 'tag', { fail: true }, { disabled: true }), node('c', 'tag')],
        [edge('trigger', 'a'), edge('a', 'off'), edge('off', 'c')],
      ),
    );
    expect(result.status).toBe('succeeded');
    // It did not run (it would have failed); c received what a sent it.
    expect(calls).toEqual(['a', 'c']);
    const fromA = result.byId.a.output;
    expect(result.byId.off).toMatchObject({ status: 'skipped', attempts: 0, input: fromA, output: fromA });
    expect((result.byId.c.output as { got: unknown }).got).toEqual(fromA);
  });

  it("sends a disabled router's input to its first output only", async () => {
    const result = await run(
      workflow(
        [node('if', 'route', { yes: false }, { disabled: true }), node('onYes', 'tag'), node('onNo', 'tag')],
        [edge('trigger', 'if'), edge('if', 'onYes', 'yes'), edge('if', 'onNo', 'no')],
      ),
    );
    expect(calls).toEqual(['onYes']);
    expect(result.byId.onNo.status).toBe('skipped');
    expect((result.byId.onYes.output as { got: unknown }).got).toEqual({ n: 1 });
  });

  it('refuses to disable the trigger or a loop, naming the field', () => {
    const definition = workflow([node('a', 'tag')], [edge('trigger', 'a')]);
    definition.nodes[0].disabled = true;
    expect(() => compileWorkflow(definition, registry)).toThrow(
      expect.objectContaining({
        details: {
          fields: [expect.objectContaining({ field: 'nodes[0].disabled', reason: expect.stringContaining('trigger cannot be disabled') })],
        },
      }),
    );
    const looped = workflow(
      [node('each', 'loop', {}, { disabled: true }), node('body', 'tag')],
      [edge('trigger', 'each'), edge('each', 'body', 'loop'), edge('body', 'each')],
    );
    expect(() => compileWorkflow(looped, registry)).toThrow(
      expect.objectContaining({
        details: {
          fields: [expect.objectContaining({ field: 'nodes[1].disabled', reason: expect.stringContaining('loop cannot be disabled') })],
        },
      }),
    );
  });

  it('runs only the branch a router sent data to, and skips what is reachable only through the other', async () => {
    const result = await run(
      workflow(
        [node('if', 'route', { yes: false }), node('onYes', 'tag'), node('afterYes', 'tag'), node('onNo', 'tag')],
        [edge('trigger', 'if'), edge('if', 'onYes', 'yes'), edge('onYes', 'afterYes'), edge('if', 'onNo', 'no')],
      ),
    );
    expect(result.status).toBe('succeeded');
    expect(calls).toEqual(['onNo']);
    expect(result.byId.if.output).toEqual({ no: { n: 1 } });
    expect(result.byId.onYes.status).toBe('skipped');
    expect(result.byId.afterYes.status).toBe('skipped');
    expect(result.byId.onNo.output).toMatchObject({ got: { n: 1 }, inputs: ['if.no:true'] });
    expect(result.output).toMatchObject({ tag: 'onNo' });
  });

  it('routes item by item in run mode item, each output getting its own list', async () => {
    const result = await run(
      workflow(
        [
          node('split', 'route', { yes: 'item.v > 1' }, { runMode: 'item', parameterMode: { yes: 'expression' } }),
          node('big', 'tag'),
          node('small', 'tag'),
        ],
        [edge('trigger', 'split'), edge('split', 'big', 'yes'), edge('split', 'small', 'no')],
      ),
      { input: [{ v: 1 }, { v: 2 }, { v: 3 }] },
    );
    expect(result.byId.big.output).toMatchObject({ got: [{ v: 2 }, { v: 3 }] });
    expect(result.byId.small.output).toMatchObject({ got: [{ v: 1 }] });
  });

  it('runs a join once, after its live predecessors, with their data in edge order and which edges were live', async () => {
    const result = await run(
      workflow(
        [node('if', 'route', { yes: true }), node('a', 'tag'), node('b', 'tag'), node('c', 'tag'), node('join', 'tag')],
        [
          edge('trigger', 'if'),
          edge('if', 'a', 'yes'),
          edge('if', 'b', 'no'),
          edge('trigger', 'c'),
          edge('a', 'join'),
          edge('b', 'join'),
          edge('c', 'join'),
        ],
      ),
    );
    expect(calls.filter((c) => c === 'join')).toHaveLength(1);
    expect(result.byId.b.status).toBe('skipped');
    const join = result.byId.join.output as { got: unknown[]; inputs: string[] };
    expect(join.inputs).toEqual(['a.main:true', 'b.main:false', 'c.main:true']);
    expect(join.got.map((g) => (g as { tag: string }).tag)).toEqual(['a', 'c']);
  });

  it('keeps independent branches running when one fails, skips what follows the failure, and fails the run', async () => {
    const result = await run(
      workflow(
        [node('bad', 'tag', { fail: true }), node('afterBad', 'tag'), node('good', 'tag'), node('afterGood', 'tag')],
        [edge('trigger', 'bad'), edge('bad', 'afterBad'), edge('trigger', 'good'), edge('good', 'afterGood')],
      ),
    );
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'NODE_CONFIGURATION', nodeId: 'bad' });
    expect(calls).toEqual(['bad', 'good', 'afterGood']);
    expect(result.byId.afterBad.status).toBe('skipped');
    expect(result.byId.afterGood.status).toBe('succeeded');
  });

  it('skips a join when one of its inputs failed', async () => {
    const result = await run(
      workflow(
        [node('bad', 'tag', { fail: true }), node('good', 'tag'), node('join', 'tag')],
        [edge('trigger', 'bad'), edge('trigger', 'good'), edge('bad', 'join'), edge('good', 'join')],
      ),
    );
    expect(result.byId.join.status).toBe('skipped');
  });

  it('loops over the input in batches and gives what the body sent back on done', async () => {
    const result = await run(
      workflow(
        [
          node('each', 'loop', { batchSize: 2 }),
          node('work', 'tag', { tag: 'input.map((x) => x * 10)' }, { parameterMode: { tag: 'expression' } }),
          node('after', 'tag'),
        ],
        [edge('trigger', 'each'), edge('each', 'work', 'loop'), edge('work', 'each'), edge('each', 'after', 'done')],
      ),
      { input: [1, 2, 3, 4, 5] },
    );
    expect(result.status).toBe('succeeded');
    expect(calls.filter((c) => c === 'work')).toHaveLength(3);
    expect(result.byId.work).toMatchObject({ status: 'succeeded', iterations: 3 });
    expect((result.byId.work.output as { tag: string }[]).map((o) => o.tag)).toEqual(['[10,20]', '[30,40]', '[50]']);
    expect(result.byId.each).toMatchObject({ status: 'succeeded', iterations: 3 });
    expect((result.byId.after.output as { got: unknown[] }).got).toHaveLength(3);
  });

  it('runs a loop of exactly MAX_LOOP_ITERATIONS, giving the event loop turns as it goes, and fails one that asks for more', async () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => i);
    const loopOver = workflow(
      [node('each', 'loop', { batchSize: 1 }), node('work', 'tag')],
      [edge('trigger', 'each'), edge('each', 'work', 'loop'), edge('work', 'each')],
    );
    // Counts the turns the event loop takes while the run goes: a body of nodes that answer at once
    // (promises alone) would hold it for all 10,000 iterations.
    let turns = 0;
    let running = true;
    const tick = () => {
      if (!running) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const full = await run(loopOver, { input: items(MAX_LOOP_ITERATIONS) });
    running = false;
    expect(full.status).toBe('succeeded');
    expect(full.byId.work.iterations).toBe(MAX_LOOP_ITERATIONS);
    expect(turns).toBeGreaterThan(MAX_LOOP_ITERATIONS / 100);

    const over = await run(loopOver, { input: items(MAX_LOOP_ITERATIONS + 1) });
    expect(over.status).toBe('failed');
    expect(over.byId.each.error).toMatchObject({
      code: 'NODE_CONFIGURATION',
      message: `Loop "each" did not finish within ${MAX_LOOP_ITERATIONS} iterations`,
    });
  }, 120_000);

  it('repeats until the body gives back an empty page', async () => {
    const pages = [[1, 2], [3], []];
    const pager = defineNode({
      type: 'pager',
      version: 1,
      displayName: 'Pager',
      description: 'Pages',
      parameters: TagParams,
      defaultRunMode: 'input',
      execute: (ctx) => pages[(ctx.runMode === 'input' ? (ctx.input as { iteration: number }) : { iteration: 0 }).iteration] ?? [],
    });
    const local = new NodeRegistry([...registry.list(), registerDefinition(pager, 'pager')]);
    const steps: StepRecord[] = [];
    const outcome = await new WorkflowExecutor({
      expressions,
      fetcher: { fetch: () => Promise.reject(new Error('x')) },
      collections: new UnavailableCollectionsProvider(),
      logger: pino({ level: 'silent' }),
      runTimeoutMs: 10_000,
    }).run(
      compileWorkflow(
        workflow(
          [node('pages', 'loop', { mode: 'repeat' }), node('page', 'pager'), node('all', 'tag')],
          [edge('trigger', 'pages'), edge('pages', 'page', 'loop'), edge('page', 'pages'), edge('pages', 'all', 'done')],
        ),
        local,
      ),
      { runId: 'run_pages', workflowId: 'w', actingUserId: 'u', input: null, variables: {}, redactor: Redactor.NONE },
      { finished: (s) => void steps.push(s), started: async () => undefined },
    );
    expect(outcome.status).toBe('succeeded');
    expect((outcome.output as { got: unknown }).got).toEqual([1, 2, 3]);
  });

  it('fails a loop whose body failed, naming the iteration and the node', async () => {
    const result = await run(
      workflow(
        [node('each', 'loop'), node('work', 'tag', { fail: 'input[0] === 2' }, { parameterMode: { fail: 'expression' } })],
        [edge('trigger', 'each'), edge('each', 'work', 'loop'), edge('work', 'each')],
      ),
      { input: [1, 2, 3] },
    );
    expect(result.status).toBe('failed');
    expect(result.byId.each).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('Iteration 1 failed at node "work"') },
    });
    expect(result.error).toMatchObject({ nodeId: 'each' });
  });

  it("keeps each finished node's outputs in its record's output, which holds them exactly, and a resumed attempt continues after the last finished node", async () => {
    const definition = workflow(
      [node('a', 'tag'), node('b', 'tag'), node('c', 'tag')],
      [edge('trigger', 'a'), edge('a', 'b'), edge('b', 'c')],
    );
    const first = await run(definition);
    // Nothing to seal that the record does not hold in clear beside it.
    expect(first.byId.a.state).toBe('output:main');
    // The worker died after a and b: only their records survived, as the store reads them back.
    calls.length = 0;
    const stored = (step: StepRecord) => JSON.parse(JSON.stringify(step)) as StepRecord;
    const resumed = await run(definition, { previous: [first.byId.trigger, first.byId.a, first.byId.b].map(stored) });
    expect(calls).toEqual(['c']);
    expect(resumed.status).toBe('succeeded');
    expect(resumed.byId.c.output).toMatchObject({ got: { tag: 'b', got: { tag: 'a', got: { n: 1 } } } });
  });

  it("seals a node's outputs when its record masked them, and a resumed attempt gets them unmasked", async () => {
    const definition = workflow([node('a', 'tag'), node('b', 'effect')], [edge('trigger', 'a'), edge('a', 'b')]);
    const redactor = new Redactor(['s3cret']);
    const first = await run(definition, { redactor, input: { n: 's3cret' } });
    expect(first.byId.a.output).toMatchObject({ got: { n: REDACTED } });
    expect(first.byId.a.state).toMatch(/^sealed:/);
    calls.length = 0;
    const resumed = await run(definition, { redactor, input: { n: 's3cret' }, previous: [first.byId.trigger, first.byId.a] });
    expect(calls).toEqual(['b']);
    expect(resumed.status).toBe('succeeded');
    // The run's answer is unmasked: b was given a's outputs as a gave them.
    expect(resumed.output).toMatchObject({ sent: { tag: 'a', got: { n: 's3cret' } } });
  });

  it("keeps a router's outputs in its record's output (its ports by name): a resumed attempt follows the output it took", async () => {
    const definition = workflow(
      [node('r', 'route', { yes: false }), node('y', 'tag'), node('n', 'tag')],
      [edge('trigger', 'r'), edge('r', 'y', 'yes'), edge('r', 'n', 'no')],
    );
    const first = await run(definition);
    expect(first.byId.r).toMatchObject({ output: { no: { n: 1 } }, state: 'output' });
    calls.length = 0;
    const stored = (step: StepRecord) => JSON.parse(JSON.stringify(step)) as StepRecord;
    const resumed = await run(definition, { previous: [first.byId.trigger, first.byId.r].map(stored) });
    expect(calls).toEqual(['n']);
    expect(resumed.byId.y.status).toBe('skipped');
    expect(resumed.byId.n.output).toMatchObject({ got: { n: 1 } });
  });

  it('marks a node that must not run twice before it starts, and fails it instead of running it again after a crash', async () => {
    const definition = workflow([node('send', 'effect'), node('after', 'tag')], [edge('trigger', 'send'), edge('send', 'after')]);
    const first = await run(definition);
    expect(first.started).toEqual([expect.objectContaining({ nodeId: 'send', status: 'running' })]);
    calls.length = 0;
    const resumed = await run(definition, { previous: [first.byId.trigger, first.started[0]] });
    expect(calls).toEqual([]);
    expect(resumed.status).toBe('failed');
    expect(resumed.byId.send).toMatchObject({ status: 'failed', error: { code: 'INTERRUPTED' } });
    expect(resumed.byId.after.status).toBe('skipped');
  });

  it('lets a node that must not run twice finish when the process stops, and stops after it', async () => {
    const slowEffect = defineNode({
      type: 'slow-effect',
      version: 1,
      displayName: 'Slow effect',
      description: 'x',
      parameters: TagParams,
      defaultRunMode: 'input',
      idempotent: false,
      execute: () => new Promise((resolve) => setTimeout(() => resolve({ done: true }), 80)),
    });
    const local = new NodeRegistry([...registry.list(), registerDefinition(slowEffect, 'slow-effect')]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new RunInterrupt('shutdown', 'stopping')), 20);
    const steps: StepRecord[] = [];
    const outcome = await new WorkflowExecutor({
      expressions,
      fetcher: { fetch: () => Promise.reject(new Error('x')) },
      collections: new UnavailableCollectionsProvider(),
      logger: pino({ level: 'silent' }),
      runTimeoutMs: 10_000,
    }).run(
      compileWorkflow(
        workflow([node('send', 'slow-effect'), node('after', 'tag')], [edge('trigger', 'send'), edge('send', 'after')]),
        local,
      ),
      {
        runId: 'run_stop',
        workflowId: 'w',
        actingUserId: 'u',
        input: null,
        variables: {},
        redactor: Redactor.NONE,
        sealer,
        signal: controller.signal,
      },
      { finished: (s) => void steps.push(s), started: async () => undefined },
    );
    expect(outcome.status).toBe('interrupted');
    expect(steps.map((s) => [s.nodeId, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['send', 'succeeded'],
    ]);
  });

  it('pauses at a wait node with its output kept, and goes on from there once the time has come', async () => {
    const definition = workflow(
      [node('pause', 'wait', { amount: 10, unit: 'minutes' }), node('after', 'tag')],
      [edge('trigger', 'pause'), edge('pause', 'after')],
    );
    const first = await run(definition);
    expect(first.status).toBe('waiting');
    expect(first.resumeAt!.getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    expect(first.byId.pause.status).toBe('waiting');
    expect(calls).toEqual([]);

    const early = await run(definition, { previous: [first.byId.trigger, first.byId.pause] });
    expect(early.status).toBe('waiting');

    const later = await run(definition, {
      previous: [first.byId.trigger, first.byId.pause],
      now: () => new Date(Date.now() + 11 * 60_000),
    });
    expect(later.status).toBe('succeeded');
    expect(later.byId.pause.status).toBe('succeeded');
    expect(later.byId.after.output).toMatchObject({ got: { n: 1 } });
  });

  it('pauses at an approval showing what it waits for, goes on along timedOut when the time comes, or along what a decision put in its state', async () => {
    const definition = workflow(
      [node('ask', 'approval', { summary: 'ok?', timeout: 10, timeoutUnit: 'minutes' }), node('yes', 'tag'), node('late', 'tag')],
      [edge('trigger', 'ask'), edge('ask', 'yes', 'approved'), edge('ask', 'late', 'timedOut')],
    );
    const first = await run(definition);
    expect(first.status).toBe('waiting');
    expect(first.byId.ask).toMatchObject({ status: 'waiting', output: { status: 'pending', summary: 'ok?' } });
    expect(JSON.stringify(first.byId.ask)).not.toContain('/approvals/');

    const timedOut = await run(definition, {
      previous: [first.byId.trigger, first.byId.ask],
      now: () => new Date(Date.now() + 11 * 60_000),
    });
    expect(timedOut.status).toBe('succeeded');
    expect(timedOut.byId.ask.output).toEqual({ timedOut: expect.objectContaining({ decision: 'timedOut', input: { n: 1 } }) });
    expect([timedOut.byId.late.status, timedOut.byId.yes.status]).toEqual(['succeeded', 'skipped']);

    // What ApprovalsService writes: the decision's output, due now.
    const decided = {
      ...first.byId.ask,
      state: sealer.seal({ ports: [['approved', { decision: 'approved' }]], until: new Date().toISOString() }),
    };
    const approved = await run(definition, { previous: [first.byId.trigger, decided] });
    expect(approved.byId.ask).toMatchObject({ status: 'succeeded', output: { approved: { decision: 'approved' } } });
    expect(approved.byId.yes.output).toMatchObject({ got: { decision: 'approved' } });
    expect(approved.byId.late.status).toBe('skipped');
  });

  it('fails an approval inside a loop body or a run that holds its waits: nothing could resume it there', async () => {
    const looped = await run(
      workflow(
        [node('each', 'loop', { batchSize: 1 }), node('ask', 'approval')],
        [edge('trigger', 'each'), edge('each', 'ask', 'loop'), edge('ask', 'each', 'approved')],
      ),
      { input: [1] },
    );
    expect(looped.status).toBe('failed');
    expect(looped.error).toMatchObject({
      code: 'NODE_CONFIGURATION',
      message: expect.stringContaining('"ask" waits for a person\'s decision'),
    });
    const held = await run(workflow([node('ask', 'approval')], [edge('trigger', 'ask')]), { holdWaits: true });
    expect(held.status).toBe('failed');
    expect(held.error?.message).toContain('top level');
  });

  it('continues from stored outputs when retrying from the failed node', async () => {
    const definition = workflow(
      [node('a', 'tag'), node('b', 'tag', { fail: 'nodes.a.tag === "a"' }, { parameterMode: { fail: 'expression' } })],
      [edge('trigger', 'a'), edge('a', 'b')],
    );
    const failed = await run(definition);
    expect(failed.status).toBe('failed');
    calls.length = 0;
    const retried = await run(definition, { previous: [failed.byId.trigger, failed.byId.a].map((s) => ({ ...s, reused: true })) });
    expect(calls).toEqual(['b']);
    expect(retried.byId.b.status).toBe('failed');
  });

  it("answers with a Respond node's output rather than the last node's", async () => {
    const result = await run(
      workflow([node('answer', 'respond'), node('after', 'tag')], [edge('trigger', 'answer'), edge('answer', 'after')]),
      { input: { q: 'a' } },
    );
    expect(result.output).toEqual({ q: 'a' });
    const plain = await run(workflow([node('after', 'tag')], [edge('trigger', 'after')]), { input: { q: 'a' } });
    expect(plain.output).toMatchObject({ tag: 'after' });
  });
});

describe('WorkflowExecutor step inputs', () => {
  it("records what each node received: the run's input for the trigger, a routed output's data, a join's array in edge order", async () => {
    const result = await run(
      workflow(
        [node('if', 'route', { yes: true }), node('onYes', 'tag'), node('onNo', 'tag'), node('side', 'tag'), node('join', 'tag')],
        [
          edge('trigger', 'if'),
          edge('if', 'onYes', 'yes'),
          edge('if', 'onNo', 'no'),
          edge('trigger', 'side'),
          edge('onYes', 'join'),
          edge('side', 'join'),
        ],
      ),
    );
    expect(result.status).toBe('succeeded');
    expect(result.byId.trigger.input).toEqual({ n: 1 });
    expect(result.byId.if).toMatchObject({ input: { n: 1 }, output: { yes: { n: 1 } } });
    expect(result.byId.onYes.input).toEqual({ n: 1 });
    expect(result.byId.onNo.status).toBe('skipped');
    expect(result.byId.onNo).not.toHaveProperty('input');
    expect(result.byId.join.input).toEqual([result.byId.onYes.output, result.byId.side.output]);
  });

  it('records the input of a failed node, with secrets masked', async () => {
    const result = await run(workflow([node('a', 'tag', { fail: true })], [edge('trigger', 'a')]), {
      input: { token: 's3cret-value', keep: 'plain' },
      redactor: new Redactor(['s3cret-value']),
    });
    expect(result.status).toBe('failed');
    expect(result.byId.trigger.input).toEqual({ token: '[REDACTED]', keep: 'plain' });
    expect(result.byId.a).toMatchObject({ status: 'failed', input: { token: '[REDACTED]', keep: 'plain' } });
  });

  it("records a loop body node's input per iteration that ran it, beside its output", async () => {
    const result = await run(
      workflow(
        [
          node('each', 'loop', { batchSize: 1 }),
          node('pick', 'route', { yes: 'input[0] !== 2' }, { parameterMode: { yes: 'expression' } }),
          node('work', 'tag'),
        ],
        [edge('trigger', 'each'), edge('each', 'pick', 'loop'), edge('pick', 'work', 'yes'), edge('work', 'each')],
      ),
      { input: [1, 2, 3] },
    );
    expect(result.status).toBe('succeeded');
    expect(result.byId.each.input).toEqual([1, 2, 3]);
    expect(result.byId.pick).toMatchObject({ iterations: 3, input: [[1], [2], [3]] });
    expect(result.byId.work).toMatchObject({ iterations: 2, input: [[1], [3]] });
    expect((result.byId.work.output as { got: unknown }[]).map((o) => o.got)).toEqual([[1], [3]]);
  });

  it('runs a node that must not run twice over many items without piling listeners on its signals', async () => {
    // Every abort listener added during the run and not removed, by the signal it is on: nothing
    // aborts here, so none fired. A signal keeps one that ends the races on it (raceSignal), not one per item.
    const live = new Map<unknown, EventTarget>();
    const add = jest.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (
      this: EventTarget,
      type,
      listener,
      options,
    ) {
      if (type === 'abort') live.set(listener, this);
      return original.add.call(this, type, listener, options);
    });
    const remove = jest.spyOn(EventTarget.prototype, 'removeEventListener').mockImplementation(function (
      this: EventTarget,
      type,
      listener,
      options,
    ) {
      if (type === 'abort') live.delete(listener);
      return original.remove.call(this, type, listener, options);
    });
    try {
      const result = await run(workflow([node('send', 'effect', {}, { runMode: 'item' })], [edge('trigger', 'send')]), {
        input: Array.from({ length: 25 }, (_, i) => i),
      });
      expect(result.status).toBe('succeeded');
      expect(calls).toHaveLength(25);
    } finally {
      add.mockRestore();
      remove.mockRestore();
    }
    const perSignal = new Map<EventTarget, number>();
    for (const target of live.values()) perSignal.set(target, (perSignal.get(target) ?? 0) + 1);
    expect(Math.max(0, ...perSignal.values())).toBeLessThanOrEqual(1);
  });

  it('gives the nodes of a run that must not run twice one signal that outlasts a stop, not one each', async () => {
    /** Abort listeners added while a run of `count` such nodes in a row goes. */
    const listenersFor = async (count: number) => {
      let added = 0;
      const add = jest.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (
        this: EventTarget,
        type,
        listener,
        options,
      ) {
        if (type === 'abort') added++;
        return original.add.call(this, type, listener, options);
      });
      try {
        const ids = Array.from({ length: count }, (_, i) => `send${i}`);
        const edges = ids.map((id, i) => edge(i === 0 ? 'trigger' : ids[i - 1], id));
        const result = await run(
          workflow(
            ids.map((id) => node(id, 'effect')),
            edges,
          ),
        );
        expect(result.status).toBe('succeeded');
      } finally {
        add.mockRestore();
      }
      return added;
    };
    expect(await listenersFor(4)).toBe(await listenersFor(1));
  });

  it('tells the signal of the nodes that must not run twice through the one abort listener of the run', async () => {
    const targets: EventTarget[] = [];
    const add = jest.spyOn(EventTarget.prototype, 'addEventListener').mockImplementation(function (
      this: EventTarget,
      type,
      listener,
      options,
    ) {
      if (type === 'abort') targets.push(this);
      return original.add.call(this, type, listener, options);
    });
    const controller = new AbortController();
    try {
      const result = await run(workflow([node('send', 'effect')], [edge('trigger', 'send')]), {
        signal: controller.signal,
        abort: (reason) => controller.abort(reason),
      });
      expect(result.status).toBe('succeeded');
    } finally {
      add.mockRestore();
    }
    expect(targets).toEqual([controller.signal]);
  });

  describe('loop records', () => {
    /** Characters of every record the listener receives over a loop of `iterations` over a body that must not run twice. */
    async function recordedChars(iterations: number): Promise<{ chars: number; work: StepRecord; send: StepRecord }> {
      let chars = 0;
      const last: Record<string, StepRecord> = {};
      const count = (step: StepRecord) => {
        chars += JSON.stringify(step).length;
        last[step.nodeId] = step;
      };
      const executor = new WorkflowExecutor({
        expressions,
        fetcher: { fetch: () => Promise.reject(new Error('x')) },
        collections: new UnavailableCollectionsProvider(),
        logger: pino({ level: 'silent' }),
        runTimeoutMs: 60_000,
      });
      const outcome = await executor.run(
        compileWorkflow(
          workflow(
            [node('each', 'loop', { batchSize: 1 }), node('work', 'tag'), node('send', 'effect')],
            [edge('trigger', 'each'), edge('each', 'work', 'loop'), edge('work', 'send'), edge('send', 'each')],
          ),
          registry,
        ),
        {
          runId: 'run_long',
          workflowId: 'w',
          actingUserId: 'u',
          input: Array.from({ length: iterations }, (_, i) => ({ i, text: 'some words of an item' })),
          variables: {},
          redactor: Redactor.NONE,
        },
        { finished: count, started: async (step) => count(step) },
      );
      expect(outcome.status).toBe('succeeded');
      return { chars, work: last.work, send: last.send };
    }

    it('records a long loop in size linear in its iterations, keeping every iteration of each body node', async () => {
      const short = await recordedChars(250);
      const long = await recordedChars(1000);
      expect(long.work).toMatchObject({ status: 'succeeded', iterations: 1000 });
      expect(long.work.output).toHaveLength(1000);
      expect((long.send.output as { sent: unknown }[])[999]).toEqual({
        sent: { tag: 'work', got: [{ i: 999, text: 'some words of an item' }], inputs: ['each.loop:true'] },
      });
      // Four times the iterations: about four times the characters, where rewriting every record each iteration made it sixteen.
      expect(long.chars / short.chars).toBeLessThan(5);
    });

    it("replaces a body node's outputs by a note once they pass the record limit, and still counts its iterations", async () => {
      const big = 'x'.repeat(300 * 1024);
      const result = await run(
        workflow(
          [node('each', 'loop', { batchSize: 1 }), node('work', 'tag', { tag: big })],
          [edge('trigger', 'each'), edge('each', 'work', 'loop'), edge('work', 'each')],
        ),
        { input: [1, 2, 3, 4, 5] },
      );
      expect(result.status).toBe('succeeded');
      expect(result.byId.work).toMatchObject({ iterations: 5, input: [[1], [2], [3], [4], [5]] });
      expect(result.byId.work.output).toEqual({
        notRecorded: true,
        reason: expect.stringMatching(/^output of more than \d+ characters exceeds the record limit of 1048576$/),
      });
      expect((result.output as { done: unknown[] }).done).toHaveLength(5);
    });
  });
});
