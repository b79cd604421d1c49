import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import pino from 'pino';
import webhookTrigger from '../../plugins/webhook-trigger';
import { defineNode, NodeConfigurationError, NodeUpstreamError, Parameter } from '../sdk';
import { AppError, ErrorCode } from '../common/app-error';
import type { StepRecord } from '../domain/step.model';
import { DecisionRequest, ParameterDecider } from '../domain/parameter-decider.port';
import { UnavailableCollectionsProvider } from './node-collections.port';
import { ExpressionEngine } from './expressions/expression-engine';
import { NodeRegistry } from './node-registry';
import { registerDefinition } from './plugin-loader';
import { Redactor, REDACTED } from './redactor';
import { RunInterrupt } from './run-interrupt';
import { compileWorkflow } from './workflow-compiler';
import { WorkflowDefinition, WorkflowNodeSpec } from '../domain/workflow-definition.model';
import { RunRequest, WorkflowExecutor } from './workflow-executor';

class EchoParams {
  @Parameter({ description: 'Anything' })
  @IsOptional()
  @IsString()
  value?: string;

  @Parameter({ description: 'A number' })
  @IsOptional()
  @IsInt()
  count?: number;
}

const calls: Record<string, number> = {};
const count = (key: string) => (calls[key] = (calls[key] ?? 0) + 1);

const echo = defineNode({
  type: 'echo',
  version: 1,
  displayName: 'Echo',
  description: 'Outputs what it got',
  parameters: EchoParams,
  defaultRunMode: 'input',
  execute: (ctx) => ({
    got: ctx.runMode === 'input' ? ctx.input : ctx.item,
    value: ctx.params.value ?? null,
    count: ctx.params.count ?? null,
  }),
});

class FailParams {
  @Parameter({ description: 'configuration | upstream | crash | upstream-once' })
  @IsString()
  kind: string;
}

const fail = defineNode({
  type: 'fail',
  version: 1,
  displayName: 'Fail',
  description: 'Fails as told',
  parameters: FailParams,
  defaultRunMode: 'input',
  execute: (ctx) => {
    const n = count(`${ctx.runId}:${ctx.nodeId}`);
    switch (ctx.params.kind) {
      case 'configuration':
        throw new NodeConfigurationError('bad setup');
      case 'upstream':
        throw new NodeUpstreamError('upstream said 503', { status: 503 });
      case 'upstream-once':
        if (n === 1) throw new NodeUpstreamError('blip', { status: 502 });
        return { recoveredOnTry: n };
      case 'leak':
        throw new NodeUpstreamError(`upstream echoed ${ctx.variables.token}`, { status: 400 });
      default:
        throw new Error('crash');
    }
  },
});

class SlowParams {
  @Parameter({ description: 'How long to wait' })
  @IsInt()
  ms: number;
}

const slow = defineNode({
  type: 'slow',
  version: 1,
  displayName: 'Slow',
  description: 'Waits, ignoring its signal',
  parameters: SlowParams,
  defaultRunMode: 'input',
  execute: (ctx) => new Promise((resolve) => setTimeout(() => resolve({ waited: ctx.params.ms }), ctx.params.ms).unref()),
});

class PageParams {
  @Parameter({ description: 'Guidance for AI Decide', template: true })
  @IsString()
  instructions: string = '';

  @Parameter({ description: 'Page to read' })
  @IsInt()
  @Min(0)
  page: number;
}

const page = defineNode({
  type: 'page',
  version: 1,
  displayName: 'Page',
  description: 'Outputs its parameters',
  parameters: PageParams,
  defaultRunMode: 'item',
  execute: (ctx) => ({ instructions: ctx.params.instructions, page: ctx.params.page }),
});

/** Answers AI Decide from a script and keeps every question. */
class ScriptedDecider extends ParameterDecider {
  readonly questions: DecisionRequest[] = [];
  constructor(private readonly answers: unknown[]) {
    super();
  }
  async decide(request: DecisionRequest): Promise<unknown> {
    this.questions.push(structuredClone(request));
    const answer = this.answers.shift();
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

const registry = new NodeRegistry([
  registerDefinition(page, 'page'),
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(echo, 'echo'),
  registerDefinition(fail, 'fail'),
  registerDefinition(slow, 'slow'),
]);

const trigger: WorkflowNodeSpec = { id: 'trigger', type: 'webhook-trigger', parameters: {} };

function chain(...nodes: WorkflowNodeSpec[]): WorkflowDefinition {
  const all = [trigger, ...nodes];
  return { nodes: all, edges: all.slice(1).map((n, i) => ({ from: all[i].id, to: n.id })), variables: [] };
}

let expressions: ExpressionEngine;
let runCounter = 0;

function executor(runTimeoutMs = 30_000, decider?: ParameterDecider) {
  return new WorkflowExecutor({
    expressions,
    fetcher: { fetch: () => Promise.reject(new Error('no network in this test')) },
    collections: new UnavailableCollectionsProvider(),
    decider,
    logger: pino({ level: 'silent' }),
    runTimeoutMs,
  });
}

async function run(definition: WorkflowDefinition, overrides: Partial<RunRequest> = {}, runTimeoutMs?: number, decider?: ParameterDecider) {
  const steps: StepRecord[] = [];
  const outcome = await executor(runTimeoutMs, decider).run(
    compileWorkflow(definition, registry, { aiDecide: decider !== undefined }),
    {
      runId: `run_${++runCounter}`,
      workflowId: 'wfl_1',
      actingUserId: 'usr_1',
      input: { q: 'hi' },
      variables: {},
      redactor: Redactor.NONE,
      ...overrides,
    },
    { finished: (step) => void steps.push(step), started: async (step) => void steps.push(step) },
  );
  return { ...outcome, byId: Object.fromEntries(steps.map((s) => [s.nodeId, s])), listened: steps };
}

beforeAll(() => {
  expressions = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 500 });
});

afterAll(async () => {
  await expressions.close();
});

describe('WorkflowExecutor', () => {
  it('passes each output to the next node and records every step in order', async () => {
    const result = await run(chain({ id: 'a', type: 'echo', parameters: { value: 'fixed' } }, { id: 'b', type: 'echo', parameters: {} }));
    expect(result.status).toBe('succeeded');
    expect(result.listened.map((s) => [s.nodeId, s.position, s.status, s.attempts])).toEqual([
      ['trigger', 0, 'succeeded', 1],
      ['a', 1, 'succeeded', 1],
      ['b', 2, 'succeeded', 1],
    ]);
    expect(result.byId.trigger.output).toEqual({ q: 'hi' });
    expect(result.byId.a.output).toEqual({ got: { q: 'hi' }, value: 'fixed', count: null });
    expect(result.byId.b.output).toEqual({ got: { got: { q: 'hi' }, value: 'fixed', count: null }, value: null, count: null });
  });

  it('evaluates expression parameters with input, variables and earlier outputs, coercing to the declared type', async () => {
    const result = await run(
      chain({
        id: 'a',
        type: 'echo',
        parameters: { value: '${input.q}-${variables.suffix}-${nodes.trigger.q}', count: 'input.n * 2' },
        parameterMode: { value: 'expression', count: 'expression' },
      }),
      { input: { q: 'hi', n: '21' }, variables: { suffix: 'x' } },
    );
    expect(result.status).toBe('succeeded');
    expect(result.byId.a.output).toMatchObject({ value: 'hi-x-hi', count: 42 });
  });

  it('serialises an object result for a string parameter', async () => {
    const result = await run(
      chain({ id: 'a', type: 'echo', parameters: { value: '{"text": input.q, "top_k": "5"}' }, parameterMode: { value: 'expression' } }),
    );
    expect(JSON.parse((result.byId.a.output as { value: string }).value)).toEqual({ text: 'hi', top_k: '5' });
  });

  it('runs a node once per item in run mode item, keeping the order', async () => {
    const result = await run(
      chain({
        id: 'each',
        type: 'echo',
        runMode: 'item',
        parameters: { value: 'item.name + "!"' },
        parameterMode: { value: 'expression' },
      }),
      { input: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
    );
    expect((result.byId.each.output as { value: string }[]).map((o) => o.value)).toEqual(['a!', 'b!', 'c!']);
  });

  it('names the node, the parameter and the expression when an expression fails, and never retries it', async () => {
    const result = await run(
      chain({
        id: 'bad',
        type: 'echo',
        parameters: { value: 'input.missing.deeper' },
        parameterMode: { value: 'expression' },
        retry: { maxAttempts: 3, backoffMs: 1 },
      }),
    );
    expect(result.status).toBe('failed');
    expect(result.byId.bad.status).toBe('failed');
    expect(result.byId.bad.attempts).toBe(0);
    expect(result.byId.bad.error).toMatchObject({
      code: 'EXPRESSION_FAILED',
      details: { nodeId: 'bad', parameter: 'value', expression: 'input.missing.deeper' },
    });
    expect(result.byId.bad.error?.message).toMatch(/parameter "value" in node "bad"/);
    expect(result.error).toMatchObject({ code: 'EXPRESSION_FAILED', nodeId: 'bad' });
  });

  it('fails the run at the first failing node and skips the rest', async () => {
    const result = await run(
      chain({ id: 'f', type: 'fail', parameters: { kind: 'configuration' } }, { id: 'after', type: 'echo', parameters: {} }),
    );
    expect(result.status).toBe('failed');
    expect(result.byId.f).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'NODE_CONFIGURATION', message: 'bad setup' } });
    expect(result.byId.after).toMatchObject({ status: 'skipped', attempts: 0, startedAt: null });
  });

  it('with continueOnError puts the error in the output and runs the successors', async () => {
    const result = await run(
      chain(
        { id: 'f', type: 'fail', continueOnError: true, parameters: { kind: 'upstream' } },
        { id: 'after', type: 'echo', parameters: {} },
      ),
    );
    expect(result.status).toBe('succeeded');
    expect(result.byId.f.status).toBe('failed');
    expect(result.byId.f.output).toEqual({ error: expect.objectContaining({ code: 'UPSTREAM_FAILED', details: { status: 503 } }) });
    expect(result.byId.after.output).toEqual({
      got: { error: expect.objectContaining({ code: 'UPSTREAM_FAILED' }) },
      value: null,
      count: null,
    });
  });

  it('retries retryable failures with backoff, but never configuration errors', async () => {
    const flaky = await run(
      chain({ id: 'f', type: 'fail', retry: { maxAttempts: 3, backoffMs: 1 }, parameters: { kind: 'upstream-once' } }),
    );
    expect(flaky.status).toBe('succeeded');
    expect(flaky.byId.f).toMatchObject({ attempts: 2, output: { recoveredOnTry: 2 } });

    const down = await run(chain({ id: 'f', type: 'fail', retry: { maxAttempts: 3, backoffMs: 1 }, parameters: { kind: 'upstream' } }));
    expect(down.byId.f).toMatchObject({ status: 'failed', attempts: 3 });

    const misconfigured = await run(
      chain({ id: 'f', type: 'fail', retry: { maxAttempts: 3, backoffMs: 1 }, parameters: { kind: 'configuration' } }),
    );
    expect(misconfigured.byId.f).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('ends a try at the node time limit even when the node ignores its signal', async () => {
    const result = await run(chain({ id: 's', type: 'slow', timeoutMs: 20, parameters: { ms: 5_000 } }));
    expect(result.byId.s).toMatchObject({ status: 'failed', error: { code: 'TIMEOUT' } });
  });

  it('fails the run at the run time limit', async () => {
    const result = await run(
      chain({ id: 's', type: 'slow', parameters: { ms: 5_000 } }, { id: 'after', type: 'echo', parameters: {} }),
      {},
      30,
    );
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'TIMEOUT', nodeId: 's' });
    expect(result.byId.after.status).toBe('skipped');
  });

  it("ends the run at its time limit through the caller's own controller when the request hands over its abort", async () => {
    const controller = new AbortController();
    const result = await run(
      chain({ id: 's', type: 'slow', parameters: { ms: 5_000 } }, { id: 'after', type: 'echo', parameters: {} }),
      { signal: controller.signal, abort: (reason) => controller.abort(reason) },
      30,
    );
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'TIMEOUT', nodeId: 's' });
    expect(result.byId.after.status).toBe('skipped');
    // The run's signal was the caller's: the time limit aborted it, with the run's interrupt as reason.
    expect(controller.signal.reason).toBeInstanceOf(RunInterrupt);
    expect(controller.signal.reason).toMatchObject({ reason: 'timeout' });
  });

  it('stops at cancel: the current step is canceled and the rest skipped', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new RunInterrupt('canceled', 'The run was canceled')), 20);
    const result = await run(chain({ id: 's', type: 'slow', parameters: { ms: 5_000 } }, { id: 'after', type: 'echo', parameters: {} }), {
      signal: controller.signal,
    });
    expect(result.status).toBe('canceled');
    expect(result.byId.s).toMatchObject({ status: 'canceled', error: { code: 'CANCELED' } });
    expect(result.byId.after.status).toBe('skipped');
  });

  it('reports a shutdown as interrupted without recording the remaining nodes', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new RunInterrupt('shutdown', 'stopping')), 20);
    const result = await run(chain({ id: 's', type: 'slow', parameters: { ms: 5_000 } }, { id: 'after', type: 'echo', parameters: {} }), {
      signal: controller.signal,
    });
    expect(result.status).toBe('interrupted');
    expect(result.listened.map((s) => s.nodeId)).toEqual(['trigger']);
  });

  it('masks secret values in outputs and errors', async () => {
    const secret = 'sk-very-secret-value';
    const result = await run(
      chain(
        { id: 'a', type: 'echo', parameters: { value: 'variables.token' }, parameterMode: { value: 'expression' } },
        { id: 'f', type: 'fail', parameters: { kind: 'leak' } },
      ),
      { variables: { token: secret }, redactor: new Redactor([secret]) },
    );
    const recorded = JSON.stringify({ steps: result.listened, error: result.error });
    expect(recorded).not.toContain(secret);
    expect((result.byId.a.output as { value: string }).value).toBe(REDACTED);
    expect(result.byId.f.error?.message).toBe(`upstream echoed ${REDACTED}`);
  });

  describe('templates and AI Decide', () => {
    const pages = (parameters: Record<string, unknown>, extra: Partial<WorkflowNodeSpec> = {}) =>
      chain({ id: 'p', type: 'page', parameters, parameterMode: { page: 'ai' }, ...extra });

    it('renders a template parameter given as fixed text', async () => {
      const result = await run(
        chain({ id: 'p', type: 'page', parameters: { page: 2, instructions: 'Read page ${item.n} of ${variables.total}' } }),
        { input: [{ n: 1 }, { n: 2 }], variables: { total: 9 } },
      );
      expect(result.byId.p.output).toEqual([
        { instructions: 'Read page 1 of 9', page: 2 },
        { instructions: 'Read page 2 of 9', page: 2 },
      ]);
    });

    it('asks the model once per item with the rendered instructions, the item and the schema, and validates the coerced answer', async () => {
      const decider = new ScriptedDecider([{ page: '3' }, { page: 7 }]);
      const result = await run(
        pages({ instructions: 'The page after ${item.last}', page: 'one page further' }),
        { input: [{ last: 2 }, { last: 6 }] },
        undefined,
        decider,
      );
      expect(result.status).toBe('succeeded');
      expect(result.byId.p.output).toEqual([
        { instructions: 'The page after 2', page: 3 },
        { instructions: 'The page after 6', page: 7 },
      ]);
      expect(decider.questions[0]).toEqual({
        node: { id: 'p', type: 'page', displayName: 'Page', description: 'Outputs its parameters' },
        instructions: 'The page after 2',
        input: { last: 2 },
        parameters: [
          { name: 'page', hint: 'one page further', required: true, schema: { description: 'Page to read', type: 'integer', minimum: 0 } },
        ],
      });
      expect(decider.questions[1].input).toEqual({ last: 6 });
    });

    it('sends a refused answer back once with its problems', async () => {
      const decider = new ScriptedDecider(['page three', { page: 3 }]);
      const result = await run(pages({}), { input: [{}] }, undefined, decider);
      expect(result.byId.p.output).toEqual([{ instructions: '', page: 3 }]);
      expect(decider.questions[1].correction).toEqual({
        answer: 'page three',
        problems: [{ field: '(answer)', reason: 'must be a JSON object of parameter values' }],
      });
    });

    it('fails the step, naming the parameter, when the corrected answer is still invalid', async () => {
      const decider = new ScriptedDecider([{ page: -1 }, { page: 'x' }, { page: 1 }]);
      const result = await run(pages({}, { retry: { maxAttempts: 3, backoffMs: 1 } }), { input: [{}] }, undefined, decider);
      expect(result.status).toBe('failed');
      expect(result.byId.p.error).toMatchObject({
        code: 'NODE_CONFIGURATION',
        message: expect.stringMatching(/^Parameters of node "p" are invalid after AI Decide chose page: page /),
        details: { nodeId: 'p', itemIndex: 0 },
      });
      expect(decider.questions).toHaveLength(2);
      expect(decider.questions[1].correction?.problems).toEqual([
        expect.objectContaining({ field: 'page', reason: expect.stringContaining('must not be less than 0') }),
      ]);
    });

    it('fails as the model failed, or records the error with continueOnError', async () => {
      const down = () =>
        new AppError(ErrorCode.UPSTREAM_FAILED, 'Language model endpoint answered 503: busy (gave up after 4 attempts)', {
          retryable: true,
          details: { status: 503 },
        });
      const failed = await run(pages({}), { input: [{}] }, undefined, new ScriptedDecider([down()]));
      expect(failed.byId.p.error).toMatchObject({
        code: 'UPSTREAM_FAILED',
        message: 'AI Decide for node "p" failed: Language model endpoint answered 503: busy (gave up after 4 attempts)',
        details: { status: 503, parameters: ['page'] },
      });

      const carriedOn = await run(
        chain(
          { id: 'p', type: 'page', parameters: {}, parameterMode: { page: 'ai' }, continueOnError: true },
          { id: 'after', type: 'echo', parameters: {} },
        ),
        { input: [{}] },
        undefined,
        new ScriptedDecider([down()]),
      );
      expect(carriedOn.status).toBe('succeeded');
      expect(carriedOn.byId.p.output).toEqual([{ error: expect.objectContaining({ code: 'UPSTREAM_FAILED' }) }]);
      expect(carriedOn.byId.after.status).toBe('succeeded');
    });

    it('tells the model no secret', async () => {
      const secret = 'sk-very-secret-value';
      const decider = new ScriptedDecider([{ page: 1 }]);
      await run(
        pages({ instructions: 'Use key ${variables.token}' }),
        { input: [{ key: secret }], variables: { token: secret }, redactor: new Redactor([secret]) },
        undefined,
        decider,
      );
      expect(JSON.stringify(decider.questions)).not.toContain(secret);
      expect(decider.questions[0]).toMatchObject({ instructions: `Use key ${REDACTED}`, input: { key: REDACTED } });
    });
  });
});
