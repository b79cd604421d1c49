import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { RunEvents } from '../../src/runs/run-events';
import { bothQueues } from '../utils/queues';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

interface SseEvent {
  event: string;
  data: any;
}

/** Reads a text/event-stream body event by event, as a browser's EventSource parses it. */
class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = '';
  readonly seen: SseEvent[] = [];

  constructor(response: Response) {
    this.reader = response.body!.getReader();
  }

  /** The next event, or null when the stream ended. */
  async next(): Promise<SseEvent | null> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const lines = block.split('\n').filter((line) => !line.startsWith(':'));
        if (!lines.length) continue;
        const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? 'message';
        const data = lines
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n');
        const parsed = { event, data: JSON.parse(data) };
        this.seen.push(parsed);
        return parsed;
      }
      const { done, value } = await this.reader.read();
      if (done) return null;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** Reads up to and including the first event named `name`. */
  async until(name: string): Promise<SseEvent> {
    for (;;) {
      const event = await this.next();
      if (!event) throw new Error(`the stream ended before a ${name} event; seen: ${JSON.stringify(this.seen)}`);
      if (event.event === name) return event;
    }
  }

  /** Every event until the stream ends. */
  async rest(): Promise<SseEvent[]> {
    const events: SseEvent[] = [];
    for (let event = await this.next(); event; event = await this.next()) events.push(event);
    return events;
  }
}

/** An upstream that holds each request until the test releases it: a run stays running meanwhile. */
async function startGate() {
  const held: ServerResponse[] = [];
  const arrived: Array<() => void> = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      held.push(res);
      arrived.splice(0).forEach((wake) => wake());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hold`,
    /** Resolves once a request is being held. */
    held: () => (held.length ? Promise.resolve() : new Promise<void>((resolve) => arrived.push(resolve))),
    release: () => {
      for (const res of held.splice(0)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ released: true }));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const echoNode = {
  id: 'reply',
  type: 'code',
  parameters: { code: 'return { answer: `You said: ${input.message} (${input.sessionId})` };' },
};

describe.each(bothQueues('chat'))('chat with a published workflow over HTTP, on $name', (queue) => {
  let t: TestApp;
  let gate: Awaited<ReturnType<typeof startGate>>;
  let echoId: string;
  let gatedId: string;

  async function createWorkflow(name: string, definition: object, publish = true): Promise<string> {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name, definition } });
    expect(created.status).toBe(201);
    if (publish) expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id;
  }

  function chat(
    workflowId: string,
    body: unknown,
    options: { key?: string; query?: string; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ) {
    return fetch(`${t.url}/api/v1/workflows/${workflowId}/chat${options.query ?? ''}`, {
      method: 'POST',
      headers: { 'x-api-key': options.key ?? t.admin.key, 'content-type': 'application/json', ...options.headers },
      body: JSON.stringify(body),
      signal: options.signal,
    });
  }

  beforeAll(async () => {
    gate = await startGate();
    t = await startTestApp({ ...(await queue.env()), FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    echoId = await createWorkflow('Echo chat', {
      nodes: [{ id: 'chat', type: 'chat-trigger', parameters: {} }, echoNode],
      edges: [{ from: 'chat', to: 'reply' }],
    });
    gatedId = await createWorkflow('Gated chat', {
      nodes: [
        { id: 'chat', type: 'chat-trigger', parameters: {} },
        { id: 'lookup', type: 'http-request', parameters: { method: 'GET', url: gate.url } },
        { id: 'reply', type: 'code', parameters: { code: 'return `Looked it up: ${nodes.chat.message}`;' } },
      ],
      edges: [
        { from: 'chat', to: 'lookup' },
        { from: 'lookup', to: 'reply' },
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await gate?.close();
    await queue.cleanup();
  });

  it('streams the run as Server-Sent Events: the run, each step, then the answer', async () => {
    const response = await chat(echoId, { sessionId: 'session-1', message: 'hello' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const sse = new SseReader(response);
    const run = await sse.until('run');
    expect(run.data).toEqual({ runId: expect.stringMatching(/^run_/), status: 'queued' });
    expect(response.headers.get('location')).toBe(`/api/v1/runs/${run.data.runId}`);
    const events = await sse.rest();
    const steps = events.filter((e) => e.event === 'step').map((e) => [e.data.nodeId, e.data.status]);
    expect(steps).toEqual([
      ['chat', 'succeeded'],
      ['reply', 'succeeded'],
    ]);
    const done = events[events.length - 1];
    expect(done).toEqual({
      event: 'done',
      data: {
        runId: run.data.runId,
        status: 'succeeded',
        answer: 'You said: hello (session-1)',
        output: { answer: 'You said: hello (session-1)' },
        error: null,
      },
    });
    // The trigger handed on the message and its session; the run is the caller's, started by chat.
    const record = await t.request('GET', `/api/v1/runs/${run.data.runId}`);
    expect(record.body).toMatchObject({
      trigger: 'chat',
      runType: 'production',
      actingUserId: t.admin.id,
      input: { sessionId: 'session-1', message: 'hello' },
    });
    expect(record.body.steps[0].output).toEqual({ sessionId: 'session-1', message: 'hello' });
  }, 60_000);

  it('answers in JSON once the run finished, with ?stream=false or Accept: application/json', async () => {
    for (const options of [{ query: '?stream=false' }, { headers: { accept: 'application/json' } }]) {
      const response = await chat(echoId, { sessionId: 's2', message: 'plain' }, options);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await response.json()) as any;
      expect(body).toEqual({
        runId: expect.stringMatching(/^run_/),
        status: 'succeeded',
        answer: 'You said: plain (s2)',
        output: { answer: 'You said: plain (s2)' },
        error: null,
      });
    }
  }, 60_000);

  it('forwards the progress of a running node (sub-steps and tokens) and each step as it finishes', async () => {
    const response = await chat(gatedId, { sessionId: 's3', message: 'Etna' });
    const sse = new SseReader(response);
    const { runId } = (await sse.until('run')).data;
    await gate.held();
    expect(await sse.until('step')).toMatchObject({ data: { nodeId: 'chat', status: 'succeeded' } });
    // What a node running in this process reports (an AI agent's model calls and tokens).
    const events = t.app.get(RunEvents, { strict: false });
    const subStep = {
      kind: 'model' as const,
      name: 'test-model',
      startedAt: new Date().toISOString(),
      durationMs: 12,
      tokens: { prompt: 5, completion: 2 },
    };
    events.progress(runId, { nodeId: 'lookup', type: 'substep', subStep });
    events.progress(runId, { nodeId: 'lookup', type: 'token', text: 'Et' });
    events.progress(runId, { nodeId: 'lookup', type: 'token', text: 'na' });
    expect(await sse.next()).toEqual({ event: 'substep', data: { nodeId: 'lookup', subStep } });
    expect(await sse.next()).toEqual({ event: 'token', data: { nodeId: 'lookup', text: 'Et' } });
    expect(await sse.next()).toEqual({ event: 'token', data: { nodeId: 'lookup', text: 'na' } });
    gate.release();
    const rest = await sse.rest();
    expect(rest.filter((e) => e.event === 'step').map((e) => e.data.nodeId)).toEqual(['lookup', 'reply']);
    expect(rest[rest.length - 1]).toMatchObject({
      event: 'done',
      data: { runId, status: 'succeeded', answer: 'Looked it up: Etna', output: 'Looked it up: Etna' },
    });
  }, 60_000);

  it('keeps the run going when the client leaves mid-stream: it completes and stays readable', async () => {
    const leave = new AbortController();
    const response = await chat(gatedId, { sessionId: 's4', message: 'Vesuvius' }, { signal: leave.signal });
    const sse = new SseReader(response);
    const { runId } = (await sse.until('run')).data;
    await gate.held();
    leave.abort();
    gate.release();
    const run = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(run).toMatchObject({ status: 'succeeded', output: 'Looked it up: Vesuvius', trigger: 'chat' });
  }, 90_000);

  it('refuses bad input with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ sessionId: 's' }, 'message'],
      [{ sessionId: 's', message: '' }, 'message'],
      [{ sessionId: 's', message: 'x'.repeat(20_001) }, 'message'],
      [{ sessionId: 's', message: 42 }, 'message'],
      [{ message: 'hi' }, 'sessionId'],
      [{ sessionId: 7, message: 'hi' }, 'sessionId'],
      [{ sessionId: 'has space', message: 'hi' }, 'sessionId'],
      [{ sessionId: 's', message: 'hi', extra: true }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const response = await chat(echoId, body);
      expect(response.status).toBe(400);
      const error = (await response.json()) as any;
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    const array = await chat(echoId, ['hi']);
    expect(array.status).toBe(400);
    const badMode = await chat(echoId, { sessionId: 's', message: 'hi' }, { query: '?stream=maybe' });
    expect(badMode.status).toBe(400);
    expect(((await badMode.json()) as any).details.fields[0].field).toBe('stream');
  });

  it('answers 409 for a workflow with nothing published (as the webhook does) and when its trigger is not chat-trigger', async () => {
    const draftOnly = await createWorkflow(
      'Unpublished chat',
      { nodes: [{ id: 'chat', type: 'chat-trigger', parameters: {} }, echoNode], edges: [{ from: 'chat', to: 'reply' }] },
      false,
    );
    const unpublished = await chat(draftOnly, { sessionId: 's', message: 'hi' });
    expect(unpublished.status).toBe(409);
    expect(((await unpublished.json()) as any).message).toMatch(/no published version to chat with/);
    const webhook = await createWorkflow('Webhook only', { nodes: [{ id: 'hook', type: 'webhook-trigger', parameters: {} }], edges: [] });
    const wrongTrigger = await chat(webhook, { sessionId: 's', message: 'hi' });
    expect(wrongTrigger.status).toBe(409);
    expect(((await wrongTrigger.json()) as any).message).toMatch(/starts with webhook-trigger, not chat-trigger/);
    expect((await chat('wfl_nosuchworkflow', { sessionId: 's', message: 'hi' })).status).toBe(404);
  }, 30_000);

  it('needs the run right (editor role): a viewer gets 403, a stranger 404, and no run starts', async () => {
    const viewer: TestUser = await t.createUser('chat viewer');
    const stranger: TestUser = await t.createUser('chat stranger');
    await t.request('PUT', `/api/v1/workflows/${echoId}/members/${viewer.id}`, { body: { role: 'viewer' } });
    const before = (await t.request('GET', `/api/v1/runs?workflowId=${echoId}&limit=100`)).body.total;
    const asViewer = await chat(echoId, { sessionId: 's', message: 'hi' }, { key: viewer.key });
    expect(asViewer.status).toBe(403);
    expect(((await asViewer.json()) as any).message).toMatch(/editor role/);
    expect((await chat(echoId, { sessionId: 's', message: 'hi' }, { key: stranger.key })).status).toBe(404);
    expect((await chat(echoId, { sessionId: 's', message: 'hi' }, { key: 'wcs_not_a_key_at_all_0000000000' })).status).toBe(401);
    expect((await t.request('GET', `/api/v1/runs?workflowId=${echoId}&limit=100`)).body.total).toBe(before);
    // An editor may.
    await t.request('PUT', `/api/v1/workflows/${echoId}/members/${viewer.id}`, { body: { role: 'editor' } });
    const asEditor = await chat(echoId, { sessionId: 's', message: 'hi' }, { key: viewer.key, query: '?stream=false' });
    expect(asEditor.status).toBe(200);
    expect(((await asEditor.json()) as any).answer).toBe('You said: hi (s)');
  }, 30_000);

  it('answers about the first run for a repeated Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `chat-${queue.name.length}-once` };
    const first = (await (await chat(echoId, { sessionId: 's', message: 'once' }, { query: '?stream=false', headers })).json()) as any;
    const again = await chat(echoId, { sessionId: 's', message: 'once' }, { query: '?stream=false', headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as any).runId).toBe(first.runId);
  }, 30_000);
});
