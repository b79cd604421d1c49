import { IsIn, IsInt, IsOptional } from 'class-validator';
import pino from 'pino';
import httpRequest from '../../plugins/http-request';
import ifNode from '../../plugins/if';
import loop from '../../plugins/loop';
import respond from '../../plugins/respond';
import webhookTrigger from '../../plugins/webhook-trigger';
import { defineNode, NodeConfigurationError, NodeUpstreamError, Parameter } from '../sdk';
import type { StepRecord } from '../domain/step.model';
import { WorkflowDefinition, WorkflowEdge, WorkflowNodeSpec } from '../domain/workflow-definition.model';
import { UnavailableCollectionsProvider } from './node-collections.port';
import { waitBefore } from './executor/node-runner';
import { OutboundFetch } from './node-http-client';
import { NodeRegistry } from './node-registry';
import { registerDefinition } from './plugin-loader';
import { Redactor } from './redactor';
import { compileWorkflow } from './workflow-compiler';
import { RunRequest, WorkflowExecutor } from './workflow-executor';

class FlakyParams {
  @Parameter({ description: 'Tries that fail before one succeeds' })
  @IsOptional()
  @IsInt()
  failTimes: number = 0;

  @Parameter({ description: 'How those tries fail' })
  @IsOptional()
  @IsIn(['upstream', 'configuration'])
  kind: 'upstream' | 'configuration' = 'upstream';
}

const tries = new Map<string, number>();

/** Fails its first `failTimes` tries (per item), and always for a value with `bad: true` (an upstream 422, not worth a retry). */
const flaky = defineNode({
  type: 'flaky',
  version: 1,
  displayName: 'Flaky',
  description: 'Fails as told',
  parameters: FlakyParams,
  defaultRunMode: 'input',
  execute: (ctx) => {
    const value = ctx.runMode === 'input' ? ctx.input : ctx.item;
    const key = `${ctx.runId}:${ctx.nodeId}:${ctx.runMode === 'item' ? ctx.itemIndex : '-'}`;
    const n = (tries.get(key) ?? 0) + 1;
    tries.set(key, n);
    if ((value as { bad?: boolean } | null)?.bad) throw new NodeUpstreamError('the upstream refused it', { status: 422 });
    if (n <= ctx.params.failTimes) {
      if (ctx.params.kind === 'configuration') throw new NodeConfigurationError('bad setup');
      throw new NodeUpstreamError(`busy (try ${n})`, { status: 503 });
    }
    return { tries: n, got: value };
  },
});

/** Outputs what it received. */
const seen = defineNode({
  type: 'seen',
  version: 1,
  displayName: 'Seen',
  description: 'Echoes its input',
  parameters: class {},
  defaultRunMode: 'input',
  execute: (ctx) => ({ saw: ctx.runMode === 'input' ? ctx.input : ctx.item }),
});

const registry = new NodeRegistry([
  registerDefinition(webhookTrigger, 'webhook-trigger'),
  registerDefinition(flaky, 'flaky'),
  registerDefinition(seen, 'seen'),
  registerDefinition(httpRequest, 'http-request'),
  registerDefinition(ifNode, 'if'),
  registerDefinition(loop, 'loop'),
  registerDefinition(respond, 'respond'),
]);

const node = (id: string, type: string, extra: Partial<WorkflowNodeSpec> = {}): WorkflowNodeSpec => ({
  id,
  type,
  parameters: {},
  ...extra,
});
const edge = (from: string, to: string, output?: string): WorkflowEdge => ({ from, to, ...(output ? { output } : {}) });
const workflow = (nodes: WorkflowNodeSpec[], edges: WorkflowEdge[]): WorkflowDefinition => ({
  nodes: [node('trigger', 'webhook-trigger'), ...nodes],
  edges,
  variables: [],
});
const RUN_TIMEOUT_MS = 30_000;

let counter = 0;

async function run(definition: WorkflowDefinition, overrides: Partial<RunRequest> = {}, fetcher?: OutboundFetch) {
  const steps: StepRecord[] = [];
  const executor = new WorkflowExecutor({
    expressions: { evaluate: () => Promise.reject(new Error('no expressions in these tests')) },
    fetcher: fetcher ?? { fetch: () => Promise.reject(new Error('no network')) },
    collections: new UnavailableCollectionsProvider(),
    logger: pino({ level: 'silent' }),
    runTimeoutMs: RUN_TIMEOUT_MS,
  });
  const outcome = await executor.run(
    compileWorkflow(definition, registry),
    {
      runId: `run_${++counter}`,
      workflowId: 'wfl_1',
      actingUserId: 'usr_1',
      input: { q: 'hi' },
      variables: {},
      redactor: Redactor.NONE,
      ...overrides,
    },
    { finished: (step) => void steps.push(step), started: async () => undefined },
  );
  return { ...outcome, byId: Object.fromEntries(steps.map((s) => [s.nodeId, s])) };
}

/** Answers each request with the next status of `statuses` (the last one again once they run out). */
function scriptedFetcher(statuses: number[]): OutboundFetch & { calls: number } {
  const fetcher = {
    calls: 0,
    fetch: async (url: string) => {
      const status = statuses[Math.min(fetcher.calls++, statuses.length - 1)];
      return { status, url, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ status })) };
    },
  };
  return fetcher as unknown as OutboundFetch & { calls: number };
}

describe('WorkflowExecutor node failures', () => {
  describe('retries', () => {
    it('tries again up to maxTries for a failure that may pass, counting the tries in attempts', async () => {
      const recovered = await run(
        workflow(
          [node('f', 'flaky', { parameters: { failTimes: 2 }, retryOnFail: true, maxTries: 3, waitBetweenTries: 1 })],
          [edge('trigger', 'f')],
        ),
      );
      expect(recovered.status).toBe('succeeded');
      expect(recovered.byId.f).toMatchObject({ status: 'succeeded', attempts: 3, output: { tries: 3 } });

      const down = await run(
        workflow(
          [node('f', 'flaky', { parameters: { failTimes: 9 }, retryOnFail: true, maxTries: 3, waitBetweenTries: 1 })],
          [edge('trigger', 'f')],
        ),
      );
      expect(down.byId.f).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'UPSTREAM_FAILED', message: 'busy (try 3)' } });
    });

    it('never tries a configuration error again, nor anything without retryOnFail', async () => {
      const misconfigured = await run(
        workflow(
          [node('f', 'flaky', { parameters: { failTimes: 1, kind: 'configuration' }, retryOnFail: true, waitBetweenTries: 0 })],
          [edge('trigger', 'f')],
        ),
      );
      expect(misconfigured.byId.f).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'NODE_CONFIGURATION' } });
      const once = await run(workflow([node('f', 'flaky', { parameters: { failTimes: 1 }, maxTries: 5 })], [edge('trigger', 'f')]));
      expect(once.byId.f).toMatchObject({ status: 'failed', attempts: 1 });
    });

    it('tries each item on its own in run mode item; the step shows the most tries one took', async () => {
      const result = await run(
        workflow(
          [node('f', 'flaky', { runMode: 'item', parameters: { failTimes: 1 }, retryOnFail: true, maxTries: 2, waitBetweenTries: 0 })],
          [edge('trigger', 'f')],
        ),
        {
          input: [{ n: 1 }, { n: 2 }],
        },
      );
      expect(result.byId.f).toMatchObject({
        status: 'succeeded',
        attempts: 2,
        output: [
          { tries: 2, got: { n: 1 } },
          { tries: 2, got: { n: 2 } },
        ],
      });
    });

    it('waits waitBetweenTries before each try, the same each time or doubling with backoff exponential', async () => {
      const waits = async (backoff: 'fixed' | 'exponential') => {
        const spy = jest.spyOn(global, 'setTimeout');
        try {
          await run(
            workflow(
              [node('f', 'flaky', { parameters: { failTimes: 3 }, retryOnFail: true, maxTries: 4, waitBetweenTries: 5, backoff })],
              [edge('trigger', 'f')],
            ),
          );
          // The run's own time limit is the other timer the executor sets.
          return spy.mock.calls.map(([, ms]) => ms).filter((ms) => ms !== RUN_TIMEOUT_MS);
        } finally {
          spy.mockRestore();
        }
      };
      expect(await waits('fixed')).toEqual([5, 5, 5]);
      expect(await waits('exponential')).toEqual([5, 10, 20]);
    });

    it('stops growing an exponential wait at five minutes', () => {
      const tries = { maxTries: 5, waitMs: 200_000, backoff: 'exponential' as const };
      expect([2, 3, 4].map((attempt) => waitBefore(attempt, tries))).toEqual([200_000, 300_000, 300_000]);
      expect(waitBefore(4, { ...tries, backoff: 'fixed' })).toBe(200_000);
    });
  });

  describe('onError', () => {
    const failing = (extra: Partial<WorkflowNodeSpec>) =>
      workflow(
        [node('f', 'flaky', extra), node('next', 'seen'), node('handle', 'seen')],
        [edge('trigger', 'f'), edge('f', 'next'), edge('f', 'handle', 'error')],
      );

    it('errorOutput in run mode input sends the failed input, with its error, to the error output only', async () => {
      const result = await run(failing({ onError: 'errorOutput' }), { input: { id: 7, bad: true } });
      expect(result.status).toBe('succeeded');
      const error = { code: 'UPSTREAM_FAILED', message: 'the upstream refused it', details: { status: 422 } };
      expect(result.byId.f).toMatchObject({ status: 'failed', attempts: 1, error, output: { error: { id: 7, bad: true, error } } });
      expect(result.byId.next.status).toBe('skipped');
      expect(result.byId.handle).toMatchObject({ status: 'succeeded', output: { saw: { id: 7, bad: true, error } } });

      const fine = await run(failing({ onError: 'errorOutput' }), { input: { id: 8 } });
      expect(fine.byId.f).toMatchObject({ status: 'succeeded', output: { main: { tries: 1, got: { id: 8 } } } });
      expect(fine.byId.next.status).toBe('succeeded');
      expect(fine.byId.handle.status).toBe('skipped');
    });

    it('errorOutput wraps a failed value that is not an object', async () => {
      const result = await run(
        workflow(
          [node('f', 'flaky', { parameters: { failTimes: 1 }, onError: 'errorOutput' }), node('handle', 'seen')],
          [edge('trigger', 'f'), edge('f', 'handle', 'error')],
        ),
        { input: 'text' },
      );
      expect(result.byId.handle.output).toEqual({
        saw: { input: 'text', error: expect.objectContaining({ code: 'UPSTREAM_FAILED', message: 'busy (try 1)' }) },
      });
    });

    it('errorOutput in run mode item sends the items that succeeded on and the failed ones, each with its error, to the error output', async () => {
      const result = await run(failing({ runMode: 'item', onError: 'errorOutput' }), {
        input: [{ id: 1 }, { id: 2, bad: true }, { id: 3 }],
      });
      expect(result.status).toBe('succeeded');
      expect(result.byId.next.output).toEqual({
        saw: [
          { tries: 1, got: { id: 1 } },
          { tries: 1, got: { id: 3 } },
        ],
      });
      expect(result.byId.handle.output).toEqual({
        saw: [
          {
            id: 2,
            bad: true,
            error: { code: 'UPSTREAM_FAILED', message: 'the upstream refused it', details: { status: 422, itemIndex: 1 } },
          },
        ],
      });
      expect(result.byId.f).toMatchObject({ status: 'failed', error: { details: { itemIndex: 1 } } });

      const allBad = await run(failing({ runMode: 'item', onError: 'errorOutput' }), { input: [{ bad: true }, { bad: true }] });
      expect(allBad.byId.next.status).toBe('skipped');
      expect((allBad.byId.handle.output as { saw: unknown[] }).saw).toHaveLength(2);
    });

    it('continue puts the error where the result would have gone, in both run modes, as continueOnError does', async () => {
      const definition = (extra: Partial<WorkflowNodeSpec>) =>
        workflow([node('f', 'flaky', extra), node('next', 'seen')], [edge('trigger', 'f'), edge('f', 'next')]);
      for (const setting of [{ onError: 'continue' as const }, { continueOnError: true }]) {
        const input = await run(definition(setting), { input: { bad: true } });
        expect(input.status).toBe('succeeded');
        expect(input.byId.next.output).toEqual({ saw: { error: expect.objectContaining({ code: 'UPSTREAM_FAILED' }) } });
        const items = await run(definition({ ...setting, runMode: 'item' }), { input: [{ id: 1 }, { bad: true }] });
        expect(items.byId.next.output).toEqual({
          saw: [{ tries: 1, got: { id: 1 } }, { error: expect.objectContaining({ details: { status: 422, itemIndex: 1 } }) }],
        });
      }
    });

    it('stop fails the step, skips what follows and fails the run', async () => {
      const result = await run(
        workflow([node('f', 'flaky', { onError: 'stop' }), node('next', 'seen')], [edge('trigger', 'f'), edge('f', 'next')]),
        { input: { bad: true } },
      );
      expect(result.status).toBe('failed');
      expect(result.byId.next.status).toBe('skipped');
    });
  });

  describe('http-request failOn', () => {
    const call = (extra: Partial<WorkflowNodeSpec>) =>
      node('call', 'http-request', { parameters: { method: 'GET', url: 'https://api.example.com/items', failOn: '5xx' }, ...extra });

    it('retries a 5xx that failOn makes a failure, and succeeds on the third try', async () => {
      const fetcher = scriptedFetcher([500, 503, 200]);
      const result = await run(
        workflow([call({ retryOnFail: true, maxTries: 3, waitBetweenTries: 0 })], [edge('trigger', 'call')]),
        {},
        fetcher,
      );
      expect(result.status).toBe('succeeded');
      expect(result.byId.call).toMatchObject({ attempts: 3, output: { response: { status: 200 } } });
      expect(fetcher.calls).toBe(3);
    });

    it('routes a 500 to the error output with errorOutput, naming the status', async () => {
      const result = await run(
        workflow([call({ onError: 'errorOutput' }), node('alert', 'seen')], [edge('trigger', 'call'), edge('call', 'alert', 'error')]),
        {},
        scriptedFetcher([500]),
      );
      expect(result.status).toBe('succeeded');
      expect(result.byId.alert.output).toEqual({
        saw: {
          q: 'hi',
          error: {
            code: 'UPSTREAM_FAILED',
            message: 'GET to https://api.example.com answered HTTP 500 (failOn "5xx")',
            details: { status: 500, body: { status: 500 } },
          },
        },
      });
    });

    it('keeps a 500 as data without failOn', async () => {
      const result = await run(
        workflow([call({ parameters: { method: 'GET', url: 'https://api.example.com/items' } })], [edge('trigger', 'call')]),
        {},
        scriptedFetcher([500]),
      );
      expect(result.byId.call).toMatchObject({ status: 'succeeded', output: { response: { status: 500 } } });
    });
  });

  describe('parameters from expressions', () => {
    it('validates each run by its own values: a refused value fails its run, and does not stick to the runs after it', async () => {
      // One executor and one compiled plan for every run, as a published version's runs share them.
      const executor = new WorkflowExecutor({
        expressions: { evaluate: async (_source, scope) => (scope.input as { n: unknown }).n },
        fetcher: { fetch: () => Promise.reject(new Error('no network')) },
        collections: new UnavailableCollectionsProvider(),
        logger: pino({ level: 'silent' }),
        runTimeoutMs: RUN_TIMEOUT_MS,
      });
      const plan = compileWorkflow(
        workflow(
          [node('f', 'flaky', { parameters: { failTimes: 'input.n' }, parameterMode: { failTimes: 'expression' } })],
          [edge('trigger', 'f')],
        ),
        registry,
      );
      const runWith = async (n: unknown) => {
        const steps: StepRecord[] = [];
        const request = { runId: `run_${++counter}`, workflowId: 'wfl_1', actingUserId: 'usr_1', input: { n }, variables: {} };
        await executor.run(
          plan,
          { ...request, redactor: Redactor.NONE },
          { finished: (step) => void steps.push(step), started: async () => undefined },
        );
        return steps.find((s) => s.nodeId === 'f');
      };
      const fine = { status: 'succeeded', output: { tries: 1 } };
      const refused = { status: 'failed', error: { code: 'NODE_CONFIGURATION', details: { fields: [{ field: 'failTimes' }] } } };
      expect(await runWith(0)).toMatchObject(fine);
      expect(await runWith(0)).toMatchObject(fine);
      // Another value is the node's own: one try that fails (failTimes 1, no retries).
      expect(await runWith(1)).toMatchObject({ status: 'failed', error: { code: 'UPSTREAM_FAILED', message: 'busy (try 1)' } });
      expect(await runWith(1.5)).toMatchObject(refused);
      expect(await runWith(1.5)).toMatchObject(refused);
      expect(await runWith(0)).toMatchObject(fine);
      expect(await runWith('0')).toMatchObject(fine);
      expect(await runWith('many')).toMatchObject(refused);
    });
  });
});

describe("WorkflowExecutor run's output", () => {
  it('is the output of the one end node, or of each end node keyed by id', async () => {
    const one = await run(workflow([node('a', 'seen')], [edge('trigger', 'a')]));
    expect(one.output).toEqual({ saw: { q: 'hi' } });
    const two = await run(workflow([node('a', 'seen'), node('b', 'flaky')], [edge('trigger', 'a'), edge('trigger', 'b')]));
    expect(two.output).toEqual({ a: { saw: { q: 'hi' } }, b: { tries: 1, got: { q: 'hi' } } });
  });

  it('counts only the ends that ran, and a node whose data went along no edge', async () => {
    const branches = workflow(
      [node('check', 'if', { runMode: 'input', parameters: { condition: false } }), node('yes', 'seen'), node('no', 'seen')],
      [edge('trigger', 'check'), edge('check', 'yes', 'true'), edge('check', 'no', 'false')],
    );
    expect((await run(branches)).output).toEqual({ saw: { q: 'hi' } });
    const deadEnd = workflow(
      [node('check', 'if', { runMode: 'input', parameters: { condition: false } }), node('yes', 'seen')],
      [edge('trigger', 'check'), edge('check', 'yes', 'true')],
    );
    expect((await run(deadEnd)).output).toEqual({ false: { q: 'hi' } });
    const handled = workflow(
      [node('f', 'flaky', { onError: 'errorOutput' }), node('alert', 'seen')],
      [edge('trigger', 'f'), edge('f', 'alert', 'error')],
    );
    expect((await run(handled)).output).toEqual({ main: { tries: 1, got: { q: 'hi' } } });
  });

  it("is a Respond node's output when one ran, whatever comes after it", async () => {
    const result = await run(
      workflow(
        [node('answer', 'respond'), node('after', 'seen'), node('side', 'seen')],
        [edge('trigger', 'answer'), edge('answer', 'after'), edge('trigger', 'side')],
      ),
    );
    expect(result.output).toEqual({ q: 'hi' });
  });

  it("is a loop's done output when nothing follows the loop", async () => {
    const result = await run(
      workflow(
        [node('each', 'loop', { parameters: { batchSize: 2 } }), node('work', 'seen')],
        [edge('trigger', 'each'), edge('each', 'work', 'loop'), edge('work', 'each')],
      ),
      {
        input: [1, 2, 3],
      },
    );
    expect(result.output).toEqual({ done: [{ saw: [1, 2] }, { saw: [3] }] });
  });

  it('is absent when the run failed', async () => {
    const result = await run(workflow([node('a', 'seen'), node('f', 'flaky')], [edge('trigger', 'a'), edge('trigger', 'f')]), {
      input: { bad: true },
    });
    expect(result.status).toBe('failed');
    expect(result.output).toBeUndefined();
  });
});
