import { SEARCH_FIXTURES } from '../fixtures/fixtures';
import { FakeChatServer } from '../utils/fake-chat-server';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { startTestApp, TestApp } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';
import { createCollection, FixtureServer, startFixtureServer, waitForFile } from './collections-files.helpers';

/**
 * The node catalogue in workflows started by their webhook: IF, Switch, Merge, Edit Fields, Code,
 * Filter, Stop and Error, Search Collection feeding Chat Completion (a local fake OpenAI-compatible
 * server), Add File.
 */
describe('the node catalogue through the webhook', () => {
  let t: TestApp;
  let upstream: Upstream;
  let chat: FakeChatServer;
  let embeddings: FakeEmbeddingsServer;
  let fixtures: FixtureServer;

  beforeAll(async () => {
    upstream = await startUpstream();
    chat = await FakeChatServer.start({ apiKey: 'sk-chat' });
    embeddings = await FakeEmbeddingsServer.start();
    fixtures = await startFixtureServer();
    t = await startTestApp({
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      EMBEDDINGS_URL: embeddings.url,
      LLM_URL: chat.url,
      LLM_API_KEY: 'sk-chat',
      LLM_MODEL: 'house-model',
      JOB_CONCURRENCY: '8',
    });
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([upstream?.close(), chat?.close(), embeddings?.close(), fixtures?.close()]);
  });

  const run = async (definition: unknown, input: unknown) => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'nodes', definition } });
    expect(created.status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input } });
    expect(started.status).toBe(202);
    return waitForRun(t.request, started.body.runId);
  };
  const step = (record: any, nodeId: string) => record.steps.find((s: any) => s.nodeId === nodeId);
  const trigger = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
  const post = (id: string, path: string) => ({
    id,
    type: 'http-request',
    parameters: { method: 'POST', url: `${upstream.url}/echo/${path}`, body: 'input' },
    parameterMode: { body: 'expression' },
  });
  const calls = (path: string) => upstream.received.filter((r) => r.path === `/echo/${path}`).map((r) => JSON.parse(r.body));

  it('routes two inputs differently through an IF', async () => {
    const definition = {
      nodes: [
        trigger,
        { id: 'big', type: 'if', parameters: { condition: 'item.amount > 100' }, parameterMode: { condition: 'expression' } },
        post('large', 'if-large'),
        post('small', 'if-small'),
      ],
      edges: [
        { from: 'trigger', to: 'big' },
        { from: 'big', to: 'large', output: 'true' },
        { from: 'big', to: 'small', output: 'false' },
      ],
    };
    const both = await run(definition, [
      { id: 1, amount: 500 },
      { id: 2, amount: 20 },
    ]);
    expect(both.status).toBe('succeeded');
    expect(calls('if-large')).toEqual([[{ id: 1, amount: 500 }]]);
    expect(calls('if-small')).toEqual([[{ id: 2, amount: 20 }]]);

    const onlySmall = await run(definition, [{ id: 3, amount: 5 }]);
    expect(step(onlySmall, 'large').status).toBe('skipped');
    expect(step(onlySmall, 'small').status).toBe('succeeded');
    expect(calls('if-large')).toHaveLength(1);
  });

  it('routes by a switch, with the unmatched items to its fallback', async () => {
    const record = await run(
      {
        nodes: [
          trigger,
          {
            id: 'route',
            type: 'switch',
            parameters: { cases: ['new', 'closed'], value: 'item.status' },
            parameterMode: { value: 'expression' },
          },
          post('fresh', 'switch-new'),
          post('done', 'switch-closed'),
          post('other', 'switch-other'),
        ],
        edges: [
          { from: 'trigger', to: 'route' },
          { from: 'route', to: 'fresh', output: 'new' },
          { from: 'route', to: 'done', output: 'closed' },
          { from: 'route', to: 'other', output: 'fallback' },
        ],
      },
      [{ status: 'new' }, { status: 'weird' }, { status: 'closed' }, { status: 'new' }],
    );
    expect(record.status).toBe('succeeded');
    expect(calls('switch-new')).toEqual([[{ status: 'new' }, { status: 'new' }]]);
    expect(calls('switch-closed')).toEqual([[{ status: 'closed' }]]);
    expect(calls('switch-other')).toEqual([[{ status: 'weird' }]]);
    expect(step(record, 'route').output).toEqual({
      new: [{ status: 'new' }, { status: 'new' }],
      fallback: [{ status: 'weird' }],
      closed: [{ status: 'closed' }],
    });
  });

  it('merges two branches by key, then edits the fields of each merged item', async () => {
    const record = await run(
      {
        nodes: [
          trigger,
          { id: 'customers', type: 'code', parameters: { code: 'return input.customers;' } },
          { id: 'orders', type: 'code', parameters: { code: 'return input.orders;' } },
          { id: 'join', type: 'merge', parameters: { mode: 'byKey', key: 'customerId', join: 'inner' } },
          {
            id: 'shape',
            type: 'set',
            parameters: { fields: '({ label: item.name + " owes " + item.total })', remove: ['customerId'] },
            parameterMode: { fields: 'expression' },
          },
        ],
        edges: [
          { from: 'trigger', to: 'customers' },
          { from: 'trigger', to: 'orders' },
          { from: 'customers', to: 'join' },
          { from: 'orders', to: 'join' },
          { from: 'join', to: 'shape' },
        ],
      },
      {
        customers: [
          { customerId: 'c1', name: 'Ada' },
          { customerId: 'c2', name: 'Bob' },
        ],
        orders: [
          { customerId: 'c2', total: 20 },
          { customerId: 'c1', total: 10 },
          { customerId: 'c9', total: 90 },
        ],
      },
    );
    expect(record.status).toBe('succeeded');
    expect(record.output).toEqual([
      { name: 'Ada', total: 10, label: 'Ada owes 10' },
      { name: 'Bob', total: 20, label: 'Bob owes 20' },
    ]);
  });

  it('runs a Code node in the sandbox, and a hostile one fails its step only', async () => {
    const good = await run(
      {
        nodes: [
          trigger,
          {
            id: 'sum',
            type: 'code',
            parameters: {
              code: 'const total = input.reduce((a, b) => a + b.n, 0);\nreturn { total, count: input.length, tag: variables.tag };',
            },
          },
        ],
        edges: [{ from: 'trigger', to: 'sum' }],
        variables: [{ name: 'tag', type: 'string', value: 'v' }],
      },
      [{ n: 2 }, { n: 5 }],
    );
    expect(good.output).toEqual({ total: 7, count: 2, tag: 'v' });

    const hostile = await run(
      {
        nodes: [
          trigger,
          { id: 'escape', type: 'code', parameters: { code: 'return this.constructor.constructor("return process")().env;' } },
        ],
        edges: [{ from: 'trigger', to: 'escape' }],
      },
      {},
    );
    expect(hostile.status).toBe('failed');
    expect(step(hostile, 'escape').error).toMatchObject({
      code: 'CODE_ERROR',
      message: expect.stringMatching(/^The code of node "escape" failed: /),
    });
    expect((await t.request('GET', '/health')).status).toBe(200);

    const broken = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'broken code',
        definition: {
          nodes: [trigger, { id: 'c', type: 'code', parameters: { code: 'return input +;' } }],
          edges: [{ from: 'trigger', to: 'c' }],
        },
      },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.details.fields).toEqual([expect.objectContaining({ field: 'nodes[1].parameters.code', nodeId: 'c', line: 1 })]);
  });

  it('filters items, and stops the run on purpose with Stop and Error', async () => {
    const record = await run(
      {
        nodes: [
          trigger,
          {
            id: 'valid',
            type: 'filter',
            parameters: { condition: 'typeof item.email === "string"' },
            parameterMode: { condition: 'expression' },
          },
          post('send', 'filter-kept'),
          { id: 'stop', type: 'stop-and-error', parameters: { message: '${input.length} item(s) had no email' } },
        ],
        edges: [
          { from: 'trigger', to: 'valid' },
          { from: 'valid', to: 'send', output: 'kept' },
          { from: 'valid', to: 'stop', output: 'discarded' },
        ],
      },
      [{ email: 'a@example.com' }, { name: 'no email' }],
    );
    expect(calls('filter-kept')).toEqual([[{ email: 'a@example.com' }]]);
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'WORKFLOW_STOPPED', nodeId: 'stop', message: 'Node "stop" failed: 1 item(s) had no email' });
  });

  it('feeds search results to a chat completion on an OpenAI-compatible server', async () => {
    const collectionId = await createCollection(t, 'Answers');
    const fixture = SEARCH_FIXTURES[0];
    const added = await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
      body: { name: fixture.file, url: `${fixtures.url}/${fixture.file}` },
    });
    expect((await waitForFile(t, collectionId, added.body.id)).status).toBe('indexed');
    chat.reply = (request) =>
      JSON.stringify({ answer: `found ${request.body?.messages?.at(-1)?.content.includes(fixture.file) ? 'the file' : 'nothing'}` });

    const record = await run(
      {
        nodes: [
          trigger,
          {
            id: 'search',
            type: 'search-collection',
            parameters: { collectionId, query: 'input.question', topK: 3, mode: 'hybrid' },
            parameterMode: { query: 'expression' },
          },
          {
            id: 'answer',
            type: 'chat-completion',
            parameters: {
              system: 'Answer from the passages only.',
              prompt: 'Question: ${nodes.trigger.question}\nPassages:\n${input.map((p) => p.fileName + ": " + p.content).join("\\n")}',
              responseSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
              temperature: 0,
            },
          },
        ],
        edges: [
          { from: 'trigger', to: 'search' },
          { from: 'search', to: 'answer' },
        ],
      },
      { question: fixture.question },
    );
    expect(record.status).toBe('succeeded');
    expect(step(record, 'search').output[0]).toMatchObject({ fileName: fixture.file, distance: expect.any(Number) });
    expect(record.output).toMatchObject({ json: { answer: 'found the file' }, model: 'house-model' });
    const sent = chat.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-chat');
    expect(sent.body).toMatchObject({ model: 'house-model', temperature: 0, response_format: { type: 'json_schema' } });
    expect(sent.body?.messages?.[0]).toEqual({ role: 'system', content: 'Answer from the passages only.' });
  });

  it('adds a file to a collection from a workflow, which ingests it', async () => {
    const collectionId = await createCollection(t, 'Fed by a workflow');
    const fixture = SEARCH_FIXTURES[1];
    const record = await run(
      {
        nodes: [
          trigger,
          {
            id: 'add',
            type: 'add-file',
            parameters: { collectionId, name: 'item.name', url: 'item.url' },
            parameterMode: { name: 'expression', url: 'expression' },
          },
        ],
        edges: [{ from: 'trigger', to: 'add' }],
      },
      [{ name: fixture.file, url: `${fixtures.url}/${fixture.file}` }],
    );
    expect(record.status).toBe('succeeded');
    const [file] = record.output;
    expect(file).toMatchObject({ name: fixture.file, status: 'pending' });
    expect((await waitForFile(t, collectionId, file.id)).status).toBe('indexed');
  });
});
