import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { lastUserText, ScriptedAgentLlm, toolResults } from '../utils/scripted-agent-llm';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { addNotes, createCollection, waitForFile } from './collections-files.helpers';

/**
 * The ai-agent node as users found it from outside, each through REST: a collection the caller may
 * not read leaves the others searched (and the model is told), memory is kept per user, and an
 * endpoint the outbound guard refuses is refused once, saying why.
 */
describe('agents, as found from outside', () => {
  const LLM_KEY = 'sk-agents-outside-0123';
  let t: TestApp;
  let llm: ScriptedAgentLlm;
  let embeddings: FakeEmbeddingsServer;
  let ada: TestUser;
  let bob: TestUser;
  let shared: string;
  let privateToOwner: string;

  beforeAll(async () => {
    llm = await ScriptedAgentLlm.start({ apiKey: LLM_KEY });
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      EMBEDDINGS_URL: embeddings.url,
      LLM_URL: `${llm.url}/v1`,
      LLM_API_KEY: LLM_KEY,
      LLM_MODEL: 'scripted-mini',
    });
    ada = await t.createUser('ada');
    bob = await t.createUser('bob');
    shared = await createCollection(t, 'Shared notes');
    privateToOwner = await createCollection(t, 'Owner only');
    for (const collection of [shared, privateToOwner]) {
      for (const id of (await addNotes(t, collection, 2)).keys()) {
        expect((await waitForFile(t, collection, id, ['indexed'])).status).toBe('indexed');
      }
    }
    expect((await t.request('PUT', `/api/v1/collections/${shared}/members/${ada.id}`, { body: { role: 'viewer' } })).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await embeddings?.close();
  });

  /** The owner's agent workflow, shared with Ada and Bob as editors (so they may run it). */
  const agentWorkflow = async (parameters: Record<string, unknown>, parameterMode: Record<string, string> = {}) => {
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'agent', type: 'ai-agent', parameters: { message: '${input.question}', ...parameters }, parameterMode },
      ],
      edges: [{ from: 'trigger', to: 'agent' }],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'agent', definition } });
    expect(created.status).toBe(201);
    for (const user of [ada, bob]) {
      expect((await t.request('PUT', `/api/v1/workflows/${created.body.id}/members/${user.id}`, { body: { role: 'editor' } })).status).toBe(
        200,
      );
    }
    return created.body.id as string;
  };
  const runAs = async (user: TestUser, workflowId: string, input: unknown) => {
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { key: user.key, body: { runType: 'test', input } });
    expect(started.status).toBe(202);
    return waitForRun(t.request, started.body.runId, { key: user.key, timeoutMs: 60_000 });
  };
  const agentStep = (record: any) => record.steps.find((s: any) => s.nodeId === 'agent');

  it('searches the collections the caller may read and tells the model which were refused', async () => {
    llm.script = (request, turn) => {
      if (turn === 0) return { toolCalls: [{ name: 'search_collections', arguments: { query: lastUserText(request) } }] };
      return { content: JSON.stringify(toolResults(request)[0]) };
    };
    const workflowId = await agentWorkflow({ collections: [shared, privateToOwner] });
    const record = await runAs(ada, workflowId, { question: 'heron' });
    expect(record.status).toBe('succeeded');
    const seen = JSON.parse(agentStep(record).output.answer) as { passages: { collectionId: string }[]; refused: unknown[] };
    expect(seen.passages.length).toBeGreaterThan(0);
    expect(new Set(seen.passages.map((p) => p.collectionId))).toEqual(new Set([shared]));
    expect(seen.refused).toEqual([{ collectionId: privateToOwner, reason: expect.stringContaining(ada.id) }]);

    // Refused everywhere, the tool answers the model with the error; the run still goes on.
    const onlyPrivate = await agentWorkflow({ collections: [privateToOwner] });
    const refused = await runAs(bob, onlyPrivate, { question: 'heron' });
    expect(refused.status).toBe('succeeded');
    expect(JSON.parse(agentStep(refused).output.answer)).toEqual({ error: expect.stringContaining(bob.id) });
  });

  it('keeps memory per user: the same session id sent by another user reads nothing of the first', async () => {
    llm.script = (request) => ({ content: `after ${request.body.messages.length - 1} earlier messages` });
    const workflowId = await agentWorkflow({ sessionKey: 'input.sessionId', memoryWindow: 10 }, { sessionKey: 'expression' });
    expect(agentStep(await runAs(ada, workflowId, { question: 'My PIN is 4321.', sessionId: 's-1' })).output.answer).toBe(
      'after 0 earlier messages',
    );
    expect(agentStep(await runAs(ada, workflowId, { question: 'What is my PIN?', sessionId: 's-1' })).output.answer).toBe(
      'after 2 earlier messages',
    );
    const bobs = await runAs(bob, workflowId, { question: 'What is my PIN?', sessionId: 's-1' });
    expect(agentStep(bobs).output.answer).toBe('after 0 earlier messages');
    const asked = llm.requests.filter((r) => lastUserText(r) === 'What is my PIN?');
    expect(JSON.stringify(asked[asked.length - 1].body.messages)).not.toContain('4321');
  });

  it('refuses an endpoint the outbound guard refuses once, naming the host and FETCH_ALLOWED_HOSTS', async () => {
    const before = llm.requests.length;
    const workflowId = await agentWorkflow({ endpoint: 'http://127.0.0.2:9/v1', model: 'm' });
    const record = await runAs(ada, workflowId, { question: 'hello?' });
    expect(record.status).toBe('failed');
    expect(record.error.message).toContain('127.0.0.2');
    expect(record.error.message).toContain('FETCH_ALLOWED_HOSTS');
    expect(record.error.message).not.toContain('gave up after');
    expect(agentStep(record).attempts).toBe(1);
    expect(llm.requests.length).toBe(before);
  });
});
