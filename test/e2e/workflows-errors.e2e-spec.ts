import { ScriptedJsonServer } from '../utils/scripted-json-server';
import { startTestApp, TestApp } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

/** Answers 200 `{ok: true}` unless told otherwise with answerNext. */
class FlakyUpstream extends ScriptedJsonServer<unknown> {
  static start(): Promise<FlakyUpstream> {
    return new FlakyUpstream().listen();
  }

  protected answer() {
    return { status: 200, body: { ok: true } };
  }
}

/**
 * Node failures through the real doors: definitions saved over HTTP, runs started by their webhook
 * and read back from the `?wait=` answer or the run record. Retries, onError, http-request's
 * failOn, and what a run's output is.
 */
describe('workflow node failures through the webhook', () => {
  let t: TestApp;
  let upstream: Upstream;
  let flaky: FlakyUpstream;

  beforeAll(async () => {
    upstream = await startUpstream();
    flaky = await FlakyUpstream.start();
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1', JOB_CONCURRENCY: '4' });
  });

  afterAll(async () => {
    await t?.close();
    await flaky?.close();
    await upstream?.close();
  });

  const trigger = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
  const create = async (definition: unknown) => {
    const res = await t.request('POST', '/api/v1/workflows', { body: { name: 'errors', definition } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  /** The finished run as `?wait=` answers it; read from the run record when the wait runs out first (a busy machine). */
  const finished = async (workflowId: string, input: unknown = {}) => {
    const res = await t.request('POST', `/api/v1/workflows/${workflowId}/runs?wait=30`, { body: { runType: 'test', input } });
    if (res.status === 200) return res.body;
    expect(res.status).toBe(202);
    return waitForRun(t.request, res.body.runId);
  };
  const step = (record: any, nodeId: string) => record.steps.find((s: any) => s.nodeId === nodeId);

  it('routes an http-request 500 to a set node through the error output, with failOn 5xx and onError errorOutput', async () => {
    const workflowId = await create({
      nodes: [
        trigger,
        {
          id: 'call',
          type: 'http-request',
          runMode: 'input',
          onError: 'errorOutput',
          parameters: { method: 'GET', url: `${upstream.url}/status/500`, failOn: '5xx' },
        },
        { id: 'ok', type: 'set', parameters: { fields: { route: 'ok' } } },
        { id: 'note', type: 'set', parameters: { fields: { route: 'failed' } } },
      ],
      edges: [
        { from: 'trigger', to: 'call' },
        { from: 'call', to: 'ok' },
        { from: 'call', to: 'note', output: 'error' },
      ],
    });
    const record = await finished(workflowId, { order: 'o1' });
    expect(record.status).toBe('succeeded');
    const error = {
      code: 'UPSTREAM_FAILED',
      message: `GET to ${upstream.url} answered HTTP 500 (failOn "5xx")`,
      details: expect.objectContaining({ status: 500 }),
    };
    expect(step(record, 'call')).toMatchObject({ status: 'failed', attempts: 1, error, output: { error: { order: 'o1', error } } });
    expect(step(record, 'ok').status).toBe('skipped');
    expect(step(record, 'note').status).toBe('succeeded');
    // The set node is the run's one end: its output is the run's.
    expect(record.output).toEqual([{ order: 'o1', error, route: 'failed' }]);
    expect(record.error).toBeNull();
  });

  it('retries until the third try succeeds against a server that fails twice, and records the tries', async () => {
    const workflowId = await create({
      nodes: [
        trigger,
        {
          id: 'call',
          type: 'http-request',
          retryOnFail: true,
          maxTries: 3,
          waitBetweenTries: 10,
          backoff: 'exponential',
          parameters: { method: 'GET', url: `${flaky.url}/items`, failOn: '5xx' },
        },
      ],
      edges: [{ from: 'trigger', to: 'call' }],
    });
    const before = flaky.requests.length;
    flaky.answerNext({ status: 500, body: { busy: true } }, { status: 503, body: { busy: true } });
    const record = await finished(workflowId);
    expect(record.status).toBe('succeeded');
    expect(step(record, 'call')).toMatchObject({
      status: 'succeeded',
      attempts: 3,
      output: { response: { status: 200, body: { ok: true } } },
    });
    expect(flaky.requests.length - before).toBe(3);
    expect(record.output).toMatchObject({ response: { status: 200 } });
  });

  it('answers with the output of each end node keyed by id when a run has two', async () => {
    const workflowId = await create({
      nodes: [
        trigger,
        { id: 'left', type: 'set', runMode: 'input', parameters: { fields: { side: 'left' } } },
        { id: 'right', type: 'set', runMode: 'input', parameters: { fields: { side: 'right' } } },
      ],
      edges: [
        { from: 'trigger', to: 'left' },
        { from: 'trigger', to: 'right' },
      ],
    });
    const record = await finished(workflowId, { n: 1 });
    expect(record.status).toBe('succeeded');
    expect(record.output).toEqual({ left: { n: 1, side: 'left' }, right: { n: 1, side: 'right' } });
    // The run record says the same as the ?wait= answer.
    expect((await t.request('GET', `/api/v1/runs/${record.id}`)).body.output).toEqual(record.output);
  });

  it('gives a failed run the output null beside its error, even when other nodes finished', async () => {
    const workflowId = await create({
      nodes: [
        trigger,
        { id: 'fine', type: 'set', runMode: 'input', parameters: { fields: { fine: true } } },
        { id: 'call', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/status/404`, failOn: 'non-2xx' } },
      ],
      edges: [
        { from: 'trigger', to: 'fine' },
        { from: 'trigger', to: 'call' },
      ],
    });
    const record = await finished(workflowId);
    expect(record.status).toBe('failed');
    expect(step(record, 'fine').status).toBe('succeeded');
    expect(record.error).toMatchObject({ code: 'UPSTREAM_FAILED', nodeId: 'call', message: expect.stringContaining('answered HTTP 404') });
    // A 404 does not pass by trying again: one try.
    expect(step(record, 'call').attempts).toBe(1);
    expect(record.output).toBeNull();
    expect((await t.request('GET', `/api/v1/runs/${record.id}`)).body.output).toBeNull();
  });

  it('refuses contradictory or out-of-range failure settings when the workflow is saved, naming node and field', async () => {
    const save = (node: Record<string, unknown>) =>
      t.request('POST', '/api/v1/workflows', {
        body: {
          name: 'bad',
          definition: {
            nodes: [trigger, { id: 'call', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/x` }, ...node }],
            edges: [{ from: 'trigger', to: 'call' }],
          },
        },
      });
    const contradictory = await save({ continueOnError: true, onError: 'stop' });
    expect(contradictory.status).toBe(400);
    expect(contradictory.body.details.fields).toEqual([
      expect.objectContaining({
        field: 'nodes[1].onError',
        nodeId: 'call',
        reason: expect.stringContaining('contradicts continueOnError'),
      }),
    ]);
    const tooMany = await save({ retryOnFail: true, maxTries: 6, backoff: 'linear', onError: 'ignore' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.details.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'definition.nodes[1].backoff',
      'definition.nodes[1].maxTries',
      'definition.nodes[1].onError',
    ]);
    const unknownPort = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'bad',
        definition: {
          nodes: [
            trigger,
            { id: 'call', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/x` } },
            { id: 'note', type: 'set', parameters: {} },
          ],
          edges: [
            { from: 'trigger', to: 'call' },
            { from: 'call', to: 'note', output: 'error' },
          ],
        },
      },
    });
    expect(unknownPort.status).toBe(400);
    expect(unknownPort.body.details.fields).toContainEqual(
      expect.objectContaining({ field: 'edges[1].output', reason: expect.stringContaining('onError "errorOutput"') }),
    );
  });

  it('keeps the settings as saved, in the stored definition', async () => {
    const node = {
      id: 'call',
      type: 'http-request',
      onError: 'errorOutput',
      retryOnFail: true,
      maxTries: 2,
      waitBetweenTries: 0,
      backoff: 'fixed',
      parameters: { method: 'GET', url: `${upstream.url}/x` },
    };
    const workflowId = await create({ nodes: [trigger, node], edges: [{ from: 'trigger', to: 'call' }] });
    const saved = await t.request('GET', `/api/v1/workflows/${workflowId}`);
    expect(saved.body.definition.nodes[1]).toMatchObject({
      onError: 'errorOutput',
      retryOnFail: true,
      maxTries: 2,
      waitBetweenTries: 0,
      backoff: 'fixed',
    });
  });
});
