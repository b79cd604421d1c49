import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { lastUserText, ScriptedAgentLlm, toolResults } from '../utils/scripted-agent-llm';
import { ScriptedRerankerServer, termOverlapScores } from '../utils/scripted-reranker-server';
import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { createCollection, waitForFile } from './collections-files.helpers';
import { modernRpc } from './mcp.helpers';

/**
 * Reranking over real HTTP, against scripted `/rerank` endpoints on 127.0.0.1 in each of the three
 * shapes (Cohere v2 configured by env; Jina and TEI named by a search, with a stored credential),
 * which score by term overlap. The embeddings are hashes of the text (no meaning at all), so the
 * order a reranked search answers in can only be the reranker's.
 */
const RERANK_KEY = 'rk-configured-0123456789';
const JINA_TOKEN = 'jina-secret-token-9876';
const LLM_KEY = 'sk-rerank-e2e-0123';
const NOTES = [
  'The lighthouse keeper logged the storm at dawn.',
  'Otters build no dams; beavers do, across the creek.',
  'The heron waited at the ford below the mill.',
  'A storm took the mill roof; the keeper of the lighthouse saw it fall.',
  'Beavers felled the alder by the ford.',
  'Bread rose slowly in the cold kitchen.',
  'The ferry crossed twice before the storm.',
  'Moss grew on the north wall of the mill.',
];

describe('reranking: configured and per-search rerankers, in the three /rerank shapes', () => {
  let t: TestApp;
  let cohere: ScriptedRerankerServer;
  let jina: ScriptedRerankerServer;
  let tei: ScriptedRerankerServer;
  let embeddings: FakeEmbeddingsServer;
  let llm: ScriptedAgentLlm;
  let collectionId: string;
  let jinaCredential: string;
  const byContent = new Map<string, string>();
  const search = (body: unknown, key?: string) => t.request('POST', `/api/v1/collections/${collectionId}/search`, { body, key });
  /** The notes in the order the term-overlap scorer puts them for `query`, among `among`. */
  const expectedOrder = (query: string, among: string[]) => {
    const scores = termOverlapScores(query, among);
    return among.map((text, i) => ({ text, score: scores[i], i })).sort((a, b) => b.score - a.score || a.i - b.i);
  };

  beforeAll(async () => {
    [cohere, jina, tei, embeddings, llm] = await Promise.all([
      ScriptedRerankerServer.start('cohere', { apiKey: RERANK_KEY }),
      ScriptedRerankerServer.start('jina', { apiKey: JINA_TOKEN }),
      ScriptedRerankerServer.start('tei'),
      FakeEmbeddingsServer.start(),
      ScriptedAgentLlm.start({ apiKey: LLM_KEY }),
    ]);
    t = await startTestApp({
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      EMBEDDINGS_URL: embeddings.url,
      RERANK_URL: cohere.endpoint,
      RERANK_KIND: 'cohere',
      RERANK_MODEL: 'rerank-v3.5',
      RERANK_API_KEY: RERANK_KEY,
      RERANK_TOP_N: '20',
      RERANK_TIMEOUT_MS: '3000',
      LLM_URL: `${llm.url}/v1`,
      LLM_API_KEY: LLM_KEY,
      LLM_MODEL: 'scripted-mini',
    });
    collectionId = await createCollection(t, 'Mill notes');
    for (const [i, text] of NOTES.entries()) {
      const res = await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
        body: { name: `note-${i}.txt`, url: `data:text/plain;base64,${Buffer.from(text).toString('base64')}` },
      });
      expect(res.status).toBe(201);
      expect((await waitForFile(t, collectionId, res.body.id, ['indexed'])).status).toBe('indexed');
      byContent.set(text, res.body.id);
    }
    const created = await t.request('POST', '/api/v1/credentials', {
      body: { name: 'jina', type: 'bearer', secrets: { token: JINA_TOKEN }, allowedHosts: [new URL(jina.url).host] },
    });
    expect(created.status).toBe(201);
    jinaCredential = created.body.id;
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await Promise.all([cohere, jina, tei, embeddings, llm].map((server) => server?.close()));
  });

  it('reranks a hybrid search with the configured Cohere-shaped endpoint, and says so', async () => {
    const query = 'storm at the lighthouse';
    const res = await search({ text: query, top_k: 3, mode: 'hybrid' });
    expect(res.status).toBe(200);
    expect(res.body.rerank).toEqual({ applied: true, candidates: NOTES.length });
    const sent = cohere.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${RERANK_KEY}`);
    expect(sent.body).toEqual({ model: 'rerank-v3.5', query, documents: expect.any(Array), top_n: NOTES.length });
    expect([...(sent.body!.documents as string[])].sort()).toEqual([...NOTES].sort());
    const expected = expectedOrder(query, NOTES).slice(0, 3);
    expect(res.body.result.map((hit: any) => [hit.content, hit.rerankScore])).toEqual(expected.map((e) => [e.text, e.score]));
    // Paging goes on in the reranked order (passages the scorer ties keep the search's order among them).
    const next = await search({ text: query, top_k: 3, offset: 3, mode: 'hybrid' });
    expect(next.body.result.map((hit: any) => hit.rerankScore)).toEqual(
      expectedOrder(query, NOTES)
        .slice(3, 6)
        .map((e) => e.score),
    );
    const pages = [...res.body.result, ...next.body.result].map((hit: any) => hit.id);
    expect(new Set(pages).size).toBe(6);
  }, 60_000);

  it('leaves vector searches and searches that opt out alone, and reranks a vector search that asks', async () => {
    const before = cohere.requests.length;
    const plain = await search({ text: 'beavers at the ford', top_k: 8 });
    expect(plain.status).toBe(200);
    expect(plain.body.rerank).toBeUndefined();
    expect(plain.body.result.every((hit: any) => hit.rerankScore === undefined)).toBe(true);
    const optedOut = await search({ text: 'beavers at the ford', mode: 'hybrid', rerank: { enabled: false } });
    expect(optedOut.body.rerank).toBeUndefined();
    expect(cohere.requests.length).toBe(before);

    const asked = await search({ text: 'beavers at the ford', top_k: 2, rerank: { top_n: 4 } });
    expect(asked.body.rerank).toEqual({ applied: true, candidates: 4 });
    // Only the vector ranking's top 4 were reranked: the answer is their best two by the reranker.
    const topFour = plain.body.result.slice(0, 4).map((hit: any) => hit.content);
    expect(asked.body.result.map((hit: any) => hit.content)).toEqual(
      expectedOrder('beavers at the ford', topFour)
        .slice(0, 2)
        .map((e) => e.text),
    );
  }, 60_000);

  it('calls a Jina-shaped endpoint a search names, with a stored credential put in at send time', async () => {
    const query = 'heron at the ford';
    const res = await search({
      text: query,
      mode: 'hybrid',
      top_k: 2,
      rerank: { url: jina.endpoint, kind: 'jina', model: 'jina-reranker-v2', credential_id: jinaCredential },
    });
    expect(res.status).toBe(200);
    expect(res.body.rerank).toEqual({ applied: true, candidates: NOTES.length });
    const sent = jina.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${JINA_TOKEN}`);
    expect(sent.body).toMatchObject({ model: 'jina-reranker-v2', query, top_n: NOTES.length, return_documents: false });
    expect(res.body.result.map((hit: any) => hit.content)).toEqual(
      expectedOrder(query, NOTES)
        .slice(0, 2)
        .map((e) => e.text),
    );
    const uses = await t.request('GET', `/api/v1/credentials/${jinaCredential}/uses`);
    expect(uses.body.items[0]).toMatchObject({ kind: 'search', host: new URL(jina.url).host, allowed: true });
  }, 60_000);

  it('calls a TEI-shaped endpoint a search names', async () => {
    const query = 'bread in the kitchen';
    const res = await search({ text: query, mode: 'hybrid', top_k: 1, rerank: { url: tei.endpoint, kind: 'tei' } });
    expect(res.status).toBe(200);
    expect(res.body.rerank).toEqual({ applied: true, candidates: NOTES.length });
    expect(tei.requests.at(-1)!.body).toMatchObject({ query, texts: expect.any(Array) });
    expect(res.body.result[0].content).toBe('Bread rose slowly in the cold kitchen.');
  }, 60_000);

  it('diversifies after reranking: the reranker judges the whole top N, and MMR chooses by its scores', async () => {
    const query = 'storm at the lighthouse';
    const res = await search({ text: query, mode: 'hybrid', top_k: 3, mmr_lambda: 0.99 });
    expect(res.status).toBe(200);
    expect(res.body.rerank).toEqual({ applied: true, candidates: NOTES.length });
    expect([...(cohere.requests.at(-1)!.body!.documents as string[])].sort()).toEqual([...NOTES].sort());
    // The embeddings are hashes, so only the reranker's scores can put these three first; at 0.99
    // relevance outweighs any likeness of hashed vectors (0.01 at most) wherever scores differ.
    const expected = expectedOrder(query, NOTES).slice(0, 3);
    expect(new Set(expected.map((e) => e.score)).size).toBe(3);
    expect(res.body.result.map((hit: any) => [hit.content, hit.rerankScore])).toEqual(expected.map((e) => [e.text, e.score]));
    // Fewer scored passages than wanted: the reranked ones come first, then the search's own order.
    const few = await search({ text: query, mode: 'hybrid', top_k: 5, mmr_lambda: 0.5, rerank: { top_n: 2 } });
    expect(few.body.rerank).toEqual({ applied: true, candidates: 2 });
    expect(few.body.result).toHaveLength(5);
    expect(few.body.result.map((hit: any) => hit.rerankScore !== undefined)).toEqual([true, true, false, false, false]);
  }, 60_000);

  it('answers in its own order, saying why, when the reranker fails, stalls or answers nonsense', async () => {
    const query = 'storm at the lighthouse';
    const unranked = await search({ text: query, mode: 'hybrid', rerank: { enabled: false } });
    const failures: [string, () => void, RegExp][] = [
      ['a 500', () => cohere.answerNext({ status: 500, body: { message: 'overloaded' } }), /answered 500: .*overloaded/],
      ['a dropped connection', () => cohere.answerNext({ dropConnection: true }), /could not be reached/],
      ['no answer in time', () => cohere.answerNext({ hang: true }), /timed out after 3000 ms/],
      ['an index out of range', () => cohere.answerNext({ status: 200, body: { results: [{ index: 99, relevance_score: 1 }] } }), /index/],
      ['no scores', () => cohere.answerNext({ status: 200, body: { oops: true } }), /without a results list/],
    ];
    for (const [what, script, reason] of failures) {
      script();
      const res = await search({ text: query, mode: 'hybrid' });
      expect([what, res.status]).toEqual([what, 200]);
      expect([what, res.body.rerank]).toEqual([what, { applied: false, candidates: NOTES.length, error: expect.stringMatching(reason) }]);
      expect(res.body.result).toEqual(unranked.body.result);
    }
  }, 90_000);

  it('refuses rerank options it cannot follow with 400 naming the field', async () => {
    const stranger = await t.createUser('stranger');
    const viewer = await t.createUser('viewer');
    expect((await t.request('PUT', `/api/v1/collections/${collectionId}/members/${viewer.id}`, { body: { role: 'viewer' } })).status).toBe(
      200,
    );
    const elsewhere = await t.request('POST', '/api/v1/credentials', {
      body: { name: 'elsewhere', type: 'bearer', secrets: { token: 'elsewhere-token-123' }, allowedHosts: ['rerank.example.com'] },
    });
    const cases: [unknown, string, RegExp, string?][] = [
      [{ top_n: 0 }, 'rerank.top_n', /top_n must not be less than 1/],
      [{ top_n: 201 }, 'rerank.top_n', /top_n must not be greater than 200/],
      [{ url: 'ftp://x' }, 'rerank.url', /http\(s\) URL/],
      [{ url: tei.endpoint }, 'rerank.kind', /is required with rerank.url/],
      [{ url: tei.endpoint, kind: 'voyage' }, 'rerank.kind', /must be one of/],
      [{ kind: 'tei' }, 'rerank.kind', /only taken with rerank.url/],
      [{ credential_id: jinaCredential }, 'rerank.credential_id', /only taken with rerank.url/],
      [{ surprise: 1 }, 'rerank.surprise', /should not exist/],
      [
        { url: jina.endpoint, kind: 'jina', credential_id: elsewhere.body.id },
        'rerank.credential_id',
        /may be sent to rerank\.example\.com, not to 127\.0\.0\.1/,
      ],
      [{ url: jina.endpoint, kind: 'jina', credential_id: jinaCredential }, 'rerank.credential_id', /holds no role on it/, viewer.key],
      [{ url: 'http://10.1.2.3/rerank', kind: 'tei' }, 'rerank.url', /10\.1\.2\.3/],
    ];
    for (const [rerank, field, reason, key] of cases) {
      const res = await search({ text: 'storm', rerank }, key);
      expect([rerank, res.status]).toEqual([rerank, 400]);
      expect([rerank, res.body.details.fields]).toEqual([
        rerank,
        expect.arrayContaining([{ field, reason: expect.stringMatching(reason) }]),
      ]);
    }
    // A stranger learns nothing of the collection, nor of the credential, and no reranker is called.
    const calls = jina.requests.length;
    expect(
      (await search({ text: 'storm', rerank: { url: jina.endpoint, kind: 'jina', credential_id: jinaCredential } }, stranger.key)).status,
    ).toBe(404);
    expect(jina.requests.length).toBe(calls);
  }, 60_000);

  it('takes rerank as an optional argument of the MCP search tool', async () => {
    const query = 'moss on the mill wall';
    const res = await modernRpc(t.url, t.admin.key, 'tools/call', {
      name: 'service_search_collection',
      arguments: { collection_id: collectionId, query, offset: 0, rerank: { url: tei.endpoint, kind: 'tei', top_n: 8 } },
    });
    expect(res.status).toBe(200);
    const content = res.message.result.structuredContent;
    expect(content.rerank).toEqual({ applied: true, candidates: 8 });
    expect(content.result[0]).toMatchObject({ content: 'Moss grew on the north wall of the mill.', rerankScore: expect.any(Number) });
    const refused = await modernRpc(t.url, t.admin.key, 'tools/call', {
      name: 'service_search_collection',
      arguments: { collection_id: collectionId, query, rerank: { top_n: 'many' } },
    });
    expect(JSON.stringify(refused.message)).toMatch(/rerank\.top_n/);
  }, 60_000);

  it('reranks the fused list of a search across collections, through REST and the MCP tool', async () => {
    const harbour = ['The harbour master saw the storm from the quay.', 'Gulls followed the ferry past the harbour wall.'];
    const otherId = await createCollection(t, 'Harbour notes');
    for (const [i, text] of harbour.entries()) {
      const res = await t.request('POST', `/api/v1/collections/${otherId}/files`, {
        body: { name: `harbour-${i}.txt`, url: `data:text/plain;base64,${Buffer.from(text).toString('base64')}` },
      });
      expect(res.status).toBe(201);
      expect((await waitForFile(t, otherId, res.body.id, ['indexed'])).status).toBe('indexed');
    }
    const everything = [...NOTES, ...harbour];
    const query = 'the storm seen from the harbour';
    const expected = expectedOrder(query, everything);
    const collection_ids = [collectionId, otherId];

    // REST: every passage of both collections is a candidate (top_n 20 > 10), so the order is the scorer's alone.
    const before = tei.requests.length;
    const res = await t.request('POST', '/api/v1/search', {
      body: { collection_ids, text: query, top_k: 3, rerank: { url: tei.endpoint, kind: 'tei', top_n: 20 } },
    });
    expect(res.status).toBe(200);
    expect(res.body.rerank).toEqual({ applied: true, candidates: everything.length });
    expect(tei.requests.length).toBe(before + 1);
    expect([...(tei.requests.at(-1)!.body!.texts as string[])].sort()).toEqual([...everything].sort());
    expect(res.body.result.map((hit: any) => hit.rerankScore)).toEqual(expected.slice(0, 3).map((e) => e.score));
    expect(res.body.result[0]).toMatchObject({ content: expected[0].text, collectionId: otherId });
    const unranked = await t.request('POST', '/api/v1/search', { body: { collection_ids, text: query, rerank: { enabled: false } } });
    expect(unranked.body.rerank).toBeUndefined();
    expect(tei.requests.length).toBe(before + 1);

    // MCP, through a real client: the same argument, the same order, and the outcome in the answer.
    const client = new Client({ name: 'rerank-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${t.admin.key}` } } }),
    );
    try {
      const tools = await client.listTools();
      const tool = tools.tools.find((d) => d.name === 'service_search_collections')!;
      expect(Object.keys((tool.inputSchema as any).properties)).toContain('rerank');
      const answer: any = await client.callTool({
        name: 'service_search_collections',
        arguments: { collection_ids, query, rerank: { url: tei.endpoint, kind: 'tei', top_n: 20 } },
      });
      expect(answer.isError).toBeFalsy();
      const content = answer.structuredContent;
      expect(content.rerank).toEqual({ applied: true, candidates: everything.length });
      expect(content.result.map((hit: any) => hit.rerankScore)).toEqual(expected.slice(0, content.result.length).map((e) => e.score));
      expect(content.result[0]).toMatchObject({ content: expected[0].text, collectionId: otherId });
      const refused: any = await client.callTool({
        name: 'service_search_collections',
        arguments: { collection_ids, query, rerank: { url: tei.endpoint } },
      });
      expect(JSON.stringify(refused)).toMatch(/rerank\.kind/);
    } finally {
      await client.close();
    }
  }, 90_000);

  it("gives the agent's search tool hybrid search with the configured reranker", async () => {
    const question = 'Who saw the lighthouse storm?';
    llm.script = (request, turn) => {
      if (turn === 0) return { toolCalls: [{ name: 'search_collections', arguments: { query: lastUserText(request) } }] };
      const [hits] = toolResults(request) as { fileName: string }[][];
      return { content: `From ${hits[0].fileName}` };
    };
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'agent', type: 'ai-agent', parameters: { message: '${input.question}', collections: [collectionId], searchTopK: 3 } },
      ],
      edges: [{ from: 'trigger', to: 'agent' }],
    };
    const workflow = await t.request('POST', '/api/v1/workflows', { body: { name: 'agent', definition } });
    expect(workflow.status).toBe(201);
    const before = cohere.requests.length;
    const started = await t.request('POST', `/api/v1/workflows/${workflow.body.id}/runs`, {
      body: { runType: 'test', input: { question } },
    });
    expect(started.status).toBe(202);
    const record = await waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    expect(cohere.requests.slice(before).map((r) => r.body?.query)).toEqual([question]);
    const tool = record.steps.find((s: any) => s.nodeId === 'agent').subSteps.find((s: any) => s.kind === 'tool');
    const expected = expectedOrder(question, NOTES).slice(0, 3);
    expect(tool.result.map((hit: any) => [hit.passage, hit.rerankScore])).toEqual(expected.map((e) => [e.text, e.score]));
    expect(tool.result[0].fileId).toBe(byContent.get(expected[0].text));
  }, 90_000);
});
