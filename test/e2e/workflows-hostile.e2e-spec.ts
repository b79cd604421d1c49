import { startTestApp, TestApp } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

/**
 * Expressions written to hurt: each must end as a clear step error within its limits, leave no
 * trace for the next evaluation, and leave the service serving.
 */
describe('hostile expressions in a workflow', () => {
  let app: TestApp;
  let upstream: Upstream;

  beforeAll(async () => {
    upstream = await startUpstream();
    app = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1', EXPRESSION_TIMEOUT_MS: '200', EXPRESSION_MEMORY_MB: '16' });
  });

  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  /** Runs a workflow whose HTTP Request body is the given expression; returns the finished run. */
  async function runBody(expression: string) {
    const created = await app.request('POST', '/api/v1/workflows', {
      body: {
        name: 'hostile',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            {
              id: 'call',
              type: 'http-request',
              parameters: { method: 'POST', url: `${upstream.url}/echo/hostile`, body: expression },
              parameterMode: { body: 'expression' },
            },
          ],
          edges: [{ from: 'trigger', to: 'call' }],
        },
      },
    });
    expect(created.status).toBe(201);
    const started = await app.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input: { n: 1 } } });
    expect(started.status).toBe(202);
    return waitForRun(app.request, started.body.runId, { timeoutMs: 20_000 });
  }

  it.each([
    ['an infinite loop', '(() => { while (true) {} })()'],
    ['a memory bomb', '(() => { const a = []; for (;;) a.push(new Array(1e6).fill(7)); })()'],
    ['a constructor escape to process', 'this.constructor.constructor("return process")().exit(1)'],
    ['a Function-constructor escape', '(function(){}).constructor("return process")().env'],
    ['require', 'require("child_process").execSync("id").toString()'],
    ['dynamic import', 'import("node:fs")'],
    ['a timer', 'setTimeout(() => 1, 10)'],
    ['a very long string', '"x".repeat(2 ** 29)'],
  ])('%s ends as a step error and the service keeps serving', async (_, expression) => {
    const arrived = upstream.received.length;
    const run = await runBody(expression);
    expect(run.status).toBe('failed');
    const step = run.steps.find((s: any) => s.nodeId === 'call');
    expect(step).toMatchObject({
      status: 'failed',
      error: { code: 'EXPRESSION_FAILED', details: { nodeId: 'call', parameter: 'body', expression } },
    });
    expect(step.error.message).toMatch(/parameter "body" in node "call"/);
    expect(upstream.received.length).toBe(arrived);
    expect((await app.request('GET', '/health')).status).toBe(200);
  });

  it('does not let one evaluation pollute Object.prototype for the next', async () => {
    const polluting = await runBody('(Object.prototype.polluted = "yes", Object.prototype.toJSON = () => "hijacked", {a: 1})');
    expect(['failed', 'succeeded']).toContain(polluting.status);
    const clean = await runBody('({seen: ({}).polluted ?? null, json: JSON.stringify({b: 2})})');
    expect(clean.status).toBe('succeeded');
    expect(clean.steps[1].output.response.body.body).toEqual({ seen: null, json: '{"b":2}' });
  });

  /** Runs trigger -> `nodes` in a line, as a test run of the draft; returns the finished run. */
  async function runLine(nodes: object[], input: unknown) {
    const ids = ['trigger', ...nodes.map((n) => (n as { id: string }).id)];
    const created = await app.request('POST', '/api/v1/workflows', {
      body: {
        name: 'line',
        definition: {
          nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, ...nodes],
          edges: ids.slice(1).map((to, i) => ({ from: ids[i], to })),
        },
      },
    });
    expect(created.status).toBe(201);
    const started = await app.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input } });
    expect(started.status).toBe(202);
    return waitForRun(app.request, started.body.runId, { timeoutMs: 20_000 });
  }

  it('carries an output nested deeper than JSON can hold to the next node, noted in the record, on the first attempt', async () => {
    // 5,000 levels from a dotted path: its state could not be sealed, which failed the run's job (retried, then "lost its worker").
    const deep = { id: 'deep', type: 'set', parameters: { fields: { [Array(5000).fill('a').join('.')]: 1 } } };
    const run = await runLine([deep, { id: 'after', type: 'code', parameters: { code: 'return 1' } }], { n: 1 });
    expect(run).toMatchObject({ status: 'succeeded', attempts: 1, output: 1 });
    expect(run.steps.map((step: { nodeId: string; status: string }) => [step.nodeId, step.status])).toEqual([
      ['trigger', 'succeeded'],
      ['deep', 'succeeded'],
      ['after', 'succeeded'],
    ]);
    expect(run.steps[1].output).toEqual({ notRecorded: true, reason: expect.stringContaining('not JSON-serialisable') });
  });

  it('names the parameter whose evaluated value holds a "constructor" key, rather than an internal error', async () => {
    const set = { id: 'keep', type: 'set', parameters: { fields: '({v: item.o})' }, parameterMode: { fields: 'expression' } };
    const run = await runLine([set], { o: { constructor: 'x' } });
    expect(run.status).toBe('failed');
    expect(run.steps[1].error.code).not.toBe('INTERNAL');
    expect(run.steps[1].error.message).toContain('fields holds an object with a key named "constructor"');
  });

  it('keeps answering webhooks and finishing runs afterwards', async () => {
    const run = await runBody('({"ok": input.n + 1})');
    expect(run.status).toBe('succeeded');
    expect(run.steps[1].output.response.body.body).toEqual({ ok: 2 });
  });
});
