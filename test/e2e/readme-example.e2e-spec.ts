import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { ScriptedAgentLlm, toolResults } from '../utils/scripted-agent-llm';
import { startTestApp, TestApp } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';
import { addNotes, createCollection, waitForFile } from './collections-files.helpers';

/**
 * The docs' worked example ("answers with citations, approved by a person, sent by HTTP",
 * docs/workflows.md), taken from the page as written: only the collection id and the two outside
 * URLs are replaced. The model is scripted (search, then an answer citing the file the search found).
 */
describe("the docs' worked example", () => {
  let t: TestApp;
  let llm: ScriptedAgentLlm;
  let embeddings: FakeEmbeddingsServer;
  let upstream: Upstream;
  let collectionId: string;

  const example = (): { name: string; definition: { nodes: { id: string; parameters: Record<string, unknown> }[] } } => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'workflows.md'), 'utf8');
    const block = /<!-- readme-example:start -->\s*```json\n([\s\S]*?)```\s*<!-- readme-example:end -->/.exec(page);
    if (!block) throw new Error('docs/workflows.md has no readme-example block');
    // The file its command block posts is the definition the page shows.
    expect(readFileSync(join(__dirname, '..', '..', 'docs', 'examples', 'answer-with-citations.json'), 'utf8')).toBe(block[1]);
    return JSON.parse(block[1]);
  };

  beforeAll(async () => {
    llm = await ScriptedAgentLlm.start({ apiKey: 'sk-readme-example' });
    embeddings = await FakeEmbeddingsServer.start();
    upstream = await startUpstream();
    t = await startTestApp({
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      EMBEDDINGS_URL: embeddings.url,
      LLM_URL: `${llm.url}/v1`,
      LLM_API_KEY: 'sk-readme-example',
      LLM_MODEL: 'scripted-mini',
    });
    collectionId = await createCollection(t, 'River notes');
    for (const id of (await addNotes(t, collectionId, 3)).keys())
      expect((await waitForFile(t, collectionId, id, ['indexed'])).status).toBe('indexed');
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await embeddings?.close();
    await upstream?.close();
  });

  it('answers from the collection with a citation, waits for the approval, then sends the answer', async () => {
    llm.script = (request, turn) => {
      if (turn === 0) return { toolCalls: [{ name: 'search_collections', arguments: { query: 'heron crossed the river' } }] };
      const hits = toolResults(request)[0] as { fileName: string; passage: string }[];
      const heron = hits.find((hit) => hit.passage.includes('heron'))!;
      return { content: `The heron crossed at mile ${/mile (\d+)/.exec(heron.passage)![1]} [${heron.fileName}].` };
    };
    const { name, definition } = example();
    const byId = new Map(definition.nodes.map((node) => [node.id, node]));
    byId.get('answer')!.parameters.collections = [collectionId];
    byId.get('review')!.parameters.notifyUrl = `${upstream.url}/echo/notify`;
    byId.get('send')!.parameters.url = `${upstream.url}/echo/send`;

    const created = await t.request('POST', '/api/v1/workflows', { body: { name, definition } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, {
      body: { input: { question: 'Where did the heron cross the river?', email: 'ada@example.com' } },
    });
    expect(started.status).toBe(202);
    const runId = started.body.id as string;

    const waiting = await waitForRun(t.request, runId, { statuses: ['waiting'], timeoutMs: 90_000 });
    const review = waiting.steps.find((step: any) => step.nodeId === 'review');
    expect(review.output.summary).toBe('Send this answer to ada@example.com?\n\nThe heron crossed at mile 3 [note-01.txt].');
    const agent = waiting.steps.find((step: any) => step.nodeId === 'answer');
    expect(agent.subSteps.map((sub: any) => `${sub.kind}:${sub.name}`)).toEqual([
      'model:scripted-mini',
      'tool:search_collections',
      'model:scripted-mini',
    ]);
    const notified = upstream.received.find((request) => request.path === '/echo/notify' && JSON.parse(request.body).runId === runId);
    expect(JSON.parse(notified!.body)).toMatchObject({
      summary: review.output.summary,
      approvalUrl: expect.stringContaining('/approvals/'),
    });
    expect(upstream.received.some((request) => request.path === '/echo/send')).toBe(false);

    const decided = await t.request('POST', `/api/v1/runs/${runId}/approvals/review`, {
      body: { decision: 'approved', fields: { note: 'checked' } },
    });
    expect(decided.status).toBe(200);
    const finished = await waitForRun(t.request, runId, { statuses: ['succeeded', 'failed'], timeoutMs: 90_000 });
    expect(finished.status).toBe('succeeded');
    const sent = upstream.received.filter((request) => request.path === '/echo/send');
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0].body)).toMatchObject({
      to: 'ada@example.com',
      text: 'The heron crossed at mile 3 [note-01.txt].',
      note: 'checked',
      approvedBy: { type: 'user' },
    });
  }, 240_000);
});
