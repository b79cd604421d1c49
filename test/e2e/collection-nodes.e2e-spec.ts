import { SEARCH_FIXTURES } from '../fixtures/fixtures';
import { FakeChatServer, promptInput, promptText } from '../utils/fake-chat-server';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { addNotes, createCollection, FixtureServer, startFixtureServer, waitForFile } from './collections-files.helpers';

/**
 * The collection nodes over real HTTP: fixture documents are ingested, then workflows started by
 * webhook list and read them with the rights of the user who started the run. Embeddings come
 * from a local fake so that ingestion is quick; extraction and indexing are the real ones.
 */

/** Reads the files of a collection page after page: one List Files execution per item of the input. */
const pagesWorkflow = (collectionId: string): { nodes: Array<Record<string, unknown>>; edges: Array<{ from: string; to: string }> } => ({
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    { id: 'list', type: 'list-files', parameters: { collectionId, offset: '${item.page * 20}' }, parameterMode: { offset: 'expression' } },
    { id: 'read', type: 'get-file-contents', parameters: { collectionId } },
  ],
  edges: [
    { from: 'trigger', to: 'list' },
    { from: 'list', to: 'read' },
  ],
});

describe('collection nodes: List Files and Get File Contents in workflows', () => {
  let t: TestApp;
  let fixtures: FixtureServer;
  let embeddings: FakeEmbeddingsServer;
  let handbook: string;
  const fixtureIds = new Map<string, string>();

  beforeAll(async () => {
    fixtures = await startFixtureServer();
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1', EMBEDDINGS_URL: embeddings.url, JOB_CONCURRENCY: '8' });
    handbook = await createCollection(t, 'Handbook');
    for (const fixture of SEARCH_FIXTURES) {
      const res = await t.request('POST', `/api/v1/collections/${handbook}/files`, {
        body: { name: fixture.file, url: `${fixtures.url}/${fixture.file}` },
      });
      expect(res.status).toBe(201);
      fixtureIds.set(fixture.file, res.body.id);
    }
    for (const id of fixtureIds.values()) expect((await waitForFile(t, handbook, id)).status).toBe('indexed');
  });

  afterAll(async () => {
    await t?.close();
    await embeddings?.close();
    await fixtures?.close();
  });

  const createWorkflow = async (definition: unknown, key?: string) => {
    const res = await t.request('POST', '/api/v1/workflows', { body: { name: 'read the handbook', definition }, key });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  const runTest = async (workflowId: string, input: unknown, key?: string) => {
    const res = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { runType: 'test', input }, key });
    expect(res.status).toBe(202);
    return waitForRun(t.request, res.body.runId, { key });
  };

  /** webhook-trigger -> list-files -> get-file-contents, the collection given in the webhook's input. */
  const readAll = (continueOnError = false) => ({
    nodes: [
      { id: 'trigger', type: 'webhook-trigger', parameters: {} },
      {
        id: 'list',
        type: 'list-files',
        parameters: { collectionId: 'item.collectionId' },
        parameterMode: { collectionId: 'expression' },
        continueOnError,
      },
      {
        id: 'read',
        type: 'get-file-contents',
        parameters: { collectionId: 'nodes.trigger.collectionId' },
        parameterMode: { collectionId: 'expression' },
      },
    ],
    edges: [
      { from: 'trigger', to: 'list' },
      { from: 'list', to: 'read' },
    ],
  });

  it('lists a collection of indexed fixtures and reads their text, all kept in the run record', async () => {
    const workflowId = await createWorkflow(readAll());
    expect((await t.request('POST', `/api/v1/workflows/${workflowId}/publish`)).status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input: { collectionId: handbook } } });
    expect(started.status).toBe(202);
    const run = await waitForRun(t.request, started.body.runId);

    expect(run).toMatchObject({ status: 'succeeded', runType: 'production', actingUserId: t.admin.id, error: null });
    expect(run.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['list', 'succeeded'],
      ['read', 'succeeded'],
    ]);
    // Run mode item over one input object: one page.
    const [page] = run.steps[1].output;
    expect(page).toHaveLength(SEARCH_FIXTURES.length);
    for (const file of page) {
      expect(Object.keys(file).sort()).toEqual(['collectionId', 'createdAt', 'id', 'name', 'size', 'status', 'type']);
      expect(file).toMatchObject({ id: fixtureIds.get(file.name), collectionId: handbook, status: 'indexed', size: expect.any(Number) });
    }
    expect(page.map((f: any) => f.name)).toEqual(SEARCH_FIXTURES.map((f) => f.file));

    const contents = run.steps[2].output;
    expect(contents).toHaveLength(SEARCH_FIXTURES.length);
    SEARCH_FIXTURES.forEach((fixture, i) => {
      expect(contents[i]).toEqual({
        id: fixtureIds.get(fixture.file),
        name: fixture.file,
        type: fixture.mime,
        content: expect.stringContaining(fixture.expectedSnippet),
      });
    });
  });

  it('reads the files List Files gave it from their own collection when Get File Contents names none', async () => {
    const workflowId = await createWorkflow({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'list', type: 'list-files', parameters: { collectionId: handbook } },
        { id: 'read', type: 'get-file-contents', parameters: {} },
      ],
      edges: [
        { from: 'trigger', to: 'list' },
        { from: 'list', to: 'read' },
      ],
    });
    const run = await runTest(workflowId, {});
    expect(run.status).toBe('succeeded');
    expect(run.steps[2].output.map((f: any) => f.name).sort()).toEqual(SEARCH_FIXTURES.map((f) => f.file).sort());
  });

  describe('a user without rights on the collection', () => {
    let bob: TestUser;

    beforeAll(async () => {
      bob = await t.createUser('bob');
    });

    it('gets a failed step, and the nodes after it do not run', async () => {
      const workflowId = await createWorkflow(readAll(), bob.key);
      const run = await runTest(workflowId, { collectionId: handbook }, bob.key);
      expect(run).toMatchObject({ status: 'failed', actingUserId: bob.id, error: { code: 'NODE_CONFIGURATION', nodeId: 'list' } });
      expect(run.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
        ['trigger', 'succeeded'],
        ['list', 'failed'],
        ['read', 'skipped'],
      ]);
      expect(run.steps[1].error).toMatchObject({
        code: 'NODE_CONFIGURATION',
        message: `collection ${handbook} not found (the run acts as user ${bob.id}, who started it; listing a collection's files needs at least the viewer role)`,
        details: { code: 'NOT_FOUND', collectionId: handbook, itemIndex: 0 },
      });
      expect(JSON.stringify(run)).not.toContain(SEARCH_FIXTURES[0].expectedSnippet);
    });

    it('with Continue on Error gets the error in the output, and the run goes on', async () => {
      const workflowId = await createWorkflow(readAll(true), bob.key);
      const run = await runTest(workflowId, { collectionId: handbook }, bob.key);
      expect(run.status).toBe('succeeded');
      expect(run.steps.map((s: any) => [s.nodeId, s.status])).toEqual([
        ['trigger', 'succeeded'],
        ['list', 'failed'],
        ['read', 'succeeded'],
      ]);
      expect(run.steps[1].output).toEqual([
        { error: expect.objectContaining({ code: 'NODE_CONFIGURATION', details: expect.objectContaining({ code: 'NOT_FOUND' }) }) },
      ]);
      expect(run.steps[2].output).toEqual([]);
    });

    it('reads once given the viewer role', async () => {
      const shared = await t.request('PUT', `/api/v1/collections/${handbook}/members/${bob.id}`, { body: { role: 'viewer' } });
      expect(shared.status).toBeLessThan(300);
      const workflowId = await createWorkflow(readAll(), bob.key);
      const run = await runTest(workflowId, { collectionId: handbook }, bob.key);
      expect(run.status).toBe('succeeded');
      expect(run.steps[2].output).toHaveLength(SEARCH_FIXTURES.length);
    });

    it('is refused adding a file as a viewer, told that adding needs the editor role, at save and at run time', async () => {
      const adding = (collectionId: string, parameterMode?: Record<string, string>) => ({
        nodes: [
          { id: 'trigger', type: 'webhook-trigger', parameters: {} },
          {
            id: 'add',
            type: 'add-file',
            parameters: { collectionId, name: 'more.txt', url: `${fixtures.url}/${SEARCH_FIXTURES[0].file}` },
            ...(parameterMode ? { parameterMode } : {}),
          },
        ],
        edges: [{ from: 'trigger', to: 'add' }],
      });
      // Named as a fixed value, the collection is checked when the workflow is saved.
      const refused = await t.request('POST', '/api/v1/workflows', { body: { name: 'add', definition: adding(handbook) }, key: bob.key });
      expect(refused.status).toBe(400);
      expect(refused.body.details.fields).toEqual([
        {
          field: 'nodes[1].parameters.collectionId',
          nodeId: 'add',
          reason: `collection ${handbook} needs the editor role, which you do not hold on it`,
        },
      ]);
      // Named by an expression, it is checked when the run adds the file.
      const workflowId = await createWorkflow(adding('item.collectionId', { collectionId: 'expression' }), bob.key);
      const run = await runTest(workflowId, { collectionId: handbook }, bob.key);
      expect(run.status).toBe('failed');
      expect(run.steps[1].error).toMatchObject({
        code: 'NODE_CONFIGURATION',
        message: expect.stringContaining(
          `(the run acts as user ${bob.id}, who started it; adding a file to a collection needs at least the editor role)`,
        ),
        details: { code: 'FORBIDDEN', collectionId: handbook },
      });
      const files = await t.request('GET', `/api/v1/collections/${handbook}/files`);
      expect(files.body.items.map((f: { name: string }) => f.name)).not.toContain('more.txt');
    });
  });

  it('reads every file of a collection of more than 20 through pages, with an expression offset', async () => {
    const notes = await createCollection(t, 'Field notes');
    const texts = await addNotes(t, notes, 45);
    for (const id of texts.keys()) await waitForFile(t, notes, id, ['indexed']);

    const workflowId = await createWorkflow(pagesWorkflow(notes));
    const run = await runTest(workflowId, [{ page: 0 }, { page: 1 }, { page: 2 }]);
    expect(run.status).toBe('succeeded');
    expect(run.steps[1].output.map((page: unknown[]) => page.length)).toEqual([20, 20, 5]);
    const read = run.steps[2].output as Array<{ id: string; content: string }>;
    expect(read.map((f) => f.id)).toEqual([...texts.keys()]);
    for (const file of read) expect(file.content).toBe(texts.get(file.id));
  });

  it('refuses AI Decide without a language model, naming the node and the parameter', async () => {
    const definition = pagesWorkflow(handbook);
    definition.nodes[1].parameterMode = { offset: 'ai' };
    const res = await t.request('POST', '/api/v1/workflows', { body: { name: 'ai', definition } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(res.body.details.fields).toEqual([
      {
        field: 'nodes[1].parameterMode.offset',
        nodeId: 'list',
        reason: expect.stringContaining(
          'node "list" sets parameter "offset" to AI Decide, but no language model is configured: set LLM_URL',
        ),
      },
    ]);
    expect((await t.request('GET', '/api/v1/node-types')).body.parameterModes).toEqual(['fixed', 'expression']);
  });
});

describe('AI Decide against a local chat completions server', () => {
  let t: TestApp;
  let embeddings: FakeEmbeddingsServer;
  let llm: FakeChatServer;

  beforeAll(async () => {
    embeddings = await FakeEmbeddingsServer.start();
    llm = await FakeChatServer.start({ apiKey: 'sk-llm-e2e-key' });
    t = await startTestApp({
      EMBEDDINGS_URL: embeddings.url,
      LLM_URL: `${llm.url}/v1`,
      LLM_API_KEY: 'sk-llm-e2e-key',
      LLM_MODEL: 'fake-mini',
    });
  });

  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await embeddings?.close();
  });

  it("lets the model choose List Files' offset from the instructions and the item, then validates it", async () => {
    const notes = await createCollection(t, 'Notes');
    const ids = [...(await addNotes(t, notes, 25)).keys()];
    // Plays a model that follows the instructions: page n starts at n * 20.
    llm.reply = (request) => JSON.stringify({ offset: String((promptInput(request) as { page: number }).page * 20) });

    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'list',
          type: 'list-files',
          parameters: {
            collectionId: notes,
            offset: 'page index times 20',
            instructions: 'Read page ${item.page} of the collection; pages hold 20 files.',
          },
          parameterMode: { offset: 'ai' },
        },
      ],
      edges: [{ from: 'trigger', to: 'list' }],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'ai pages', definition } });
    expect(created.status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, {
      body: { runType: 'test', input: [{ page: 1 }] },
    });
    const run = await waitForRun(t.request, started.body.runId);

    expect(run.status).toBe('succeeded');
    expect(run.steps[1].output[0].map((f: any) => f.id)).toEqual(ids.slice(20));
    expect(llm.requests).toHaveLength(1);
    const [request] = llm.requests;
    expect(request.headers.authorization).toBe('Bearer sk-llm-e2e-key');
    expect(request.body).toMatchObject({ model: 'fake-mini', response_format: { type: 'json_schema' } });
    expect(promptText(request)).toContain('Instructions: Read page 1 of the collection; pages hold 20 files.');
    expect(promptText(request)).toContain('Hint: page index times 20');
    expect((await t.request('GET', '/api/v1/node-types')).body.parameterModes).toEqual(['fixed', 'expression', 'ai']);
    // Listing does not wait for ingestion, but closing the app while it runs is not this test's subject.
    for (const id of ids) await waitForFile(t, notes, id, ['indexed']);
  });
});
