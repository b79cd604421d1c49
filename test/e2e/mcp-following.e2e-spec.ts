import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SEARCH_FIXTURES } from '../fixtures/fixtures';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { FixtureFiles, serveFixtures, until } from './mcp.helpers';

/**
 * Results a client can follow, through the real service and the SDK's clients: search hits link
 * passages and files that resources/read opens (with the reader's rights), collections and files
 * are resources, a prompt answers with citations, a long workflow call reports progress in both
 * eras, and a 2026-07-28 client hears `list_changed` on its subscription stream.
 */

const volcanoes = SEARCH_FIXTURES.find((f) => f.file === 'volcanoes.pdf')!;

/** A workflow tool that answers with its arguments. */
const echoing = (toolName: string) => ({
  nodes: [
    { id: 'ask', type: 'mcp-trigger', parameters: { toolName, inputSchema: { type: 'object' } } },
    { id: 'answer', type: 'respond', parameters: {} },
  ],
  edges: [{ from: 'ask', to: 'answer' }],
});

describe('MCP results a client can follow', () => {
  let t: TestApp;
  let fixtures: FixtureFiles;
  let owner: TestUser;
  let stranger: TestUser;
  let collectionId: string;
  const closers: (() => Promise<void>)[] = [];

  const v1 = async (key: string) => {
    const client = new Client({ name: 'following-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    closers.push(() => client.close());
    return client;
  };
  const v2 = async (key: string) => {
    const client = new V2Client({ name: 'following-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new V2Transport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    closers.push(() => client.close());
    return client;
  };
  const publish = async (name: string, definition: unknown) => {
    const created = await t.request('POST', '/api/v1/workflows', { key: owner.key, body: { name, definition } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`, { key: owner.key })).status).toBe(201);
    return created.body.id as string;
  };

  beforeAll(async () => {
    fixtures = await serveFixtures();
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    [owner, stranger] = await Promise.all([t.createUser('following-owner'), t.createUser('following-stranger')]);
    collectionId = (await t.request('POST', '/api/v1/collections', { key: owner.key, body: { name: 'Geology' } })).body.id;
    await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
      key: owner.key,
      body: { name: 'volcanoes.pdf', url: `${fixtures.url}/volcanoes.pdf` },
    });
    await until(
      async () => (await t.request('GET', `/api/v1/collections/${collectionId}/files`, { key: owner.key })).body.items,
      (items: { status: string }[]) => items.every((file) => file.status === 'indexed'),
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.all(closers.map((close) => close().catch(() => undefined)));
    await t?.close();
    await fixtures?.close();
  });

  it("links each search hit's passage and file; resources/read opens them for the caller, and for nobody else", async () => {
    const client = await v2(owner.key);
    const result = await client.callTool({
      name: 'service_search_collection',
      arguments: { collection_id: collectionId, query: volcanoes.question },
    });
    const hits = (result.structuredContent as { result: { id: string; fileId: string; content: string }[] }).result;
    const links = (result.content as { type: string; uri: string }[]).filter((block) => block.type === 'resource_link');
    expect(links.map((link) => link.uri)).toEqual([
      ...hits.map((hit) => `collections://${collectionId}/files/${hit.fileId}/passages/${hit.id}`),
      `collections://${collectionId}/files/${hits[0].fileId}`,
    ]);
    const passage = await client.readResource({ uri: links[0].uri });
    expect(passage.contents).toEqual([{ uri: links[0].uri, mimeType: 'text/plain', text: hits[0].content }]);
    const file = await client.readResource({ uri: links[links.length - 1].uri });
    expect((file.contents[0] as { text: string }).text).toContain(volcanoes.expectedSnippet);

    const other = await v2(stranger.key);
    for (const link of [links[0], links[links.length - 1], { uri: `collections://${collectionId}` }]) {
      await expect(other.readResource({ uri: link.uri })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Resource not found'),
      });
    }
  });

  it('lists collections and their indexed files as resources, and reads a collection', async () => {
    const client = await v1(owner.key);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(expect.arrayContaining([`collections://${collectionId}`]));
    expect(resources.find((resource) => resource.name === 'volcanoes.pdf')).toMatchObject({ mimeType: 'text/plain' });
    const read = await client.readResource({ uri: `collections://${collectionId}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
      id: collectionId,
      name: 'Geology',
      files: { indexed: 1 },
    });
    expect((await client.listResourceTemplates()).resourceTemplates).toHaveLength(4);
  });

  it('answers with citations: the prompt embeds the passages found under the URIs to cite', async () => {
    const client = await v1(owner.key);
    const prompt = await client.getPrompt({
      name: 'answer_with_citations',
      arguments: { collection_id: collectionId, question: volcanoes.question },
    });
    const embedded = prompt.messages
      .slice(1)
      .map((message) => message.content as { type: string; resource: { uri: string; text: string } });
    expect(embedded.length).toBeGreaterThan(0);
    expect(
      embedded.every((content) => content.type === 'resource' && content.resource.uri.startsWith(`collections://${collectionId}/files/`)),
    ).toBe(true);
    expect(embedded.some((content) => content.resource.text.includes(volcanoes.expectedSnippet))).toBe(true);
  });

  it('reports the progress of a workflow call to a client that sent a progress token, in both eras', async () => {
    await publish('Three steps', {
      nodes: [
        { id: 'ask', type: 'mcp-trigger', parameters: { toolName: 'three_steps', inputSchema: { type: 'object' } } },
        { id: 'first', type: 'wait', parameters: { amount: 3, unit: 'seconds' } },
        { id: 'second', type: 'wait', parameters: { amount: 3, unit: 'seconds' } },
        { id: 'answer', type: 'respond', parameters: {} },
      ],
      edges: [
        { from: 'ask', to: 'first' },
        { from: 'first', to: 'second' },
        { from: 'second', to: 'answer' },
      ],
    });
    const legacy: { progress: number; message?: string }[] = [];
    const legacyResult = (await (
      await v1(owner.key)
    ).callTool({ name: 'three_steps', arguments: {} }, undefined, {
      onprogress: (progress) => void legacy.push(progress),
    })) as CallToolResult;
    const modern: { progress: number; message?: string }[] = [];
    const modernResult = await (
      await v2(owner.key)
    ).callTool({ name: 'three_steps', arguments: {} }, { onprogress: (progress) => void modern.push(progress) });
    for (const [result, progress] of [
      [legacyResult, legacy],
      [modernResult, modern],
    ] as const) {
      expect(result.structuredContent).toMatchObject({ status: 'succeeded' });
      expect(progress.length).toBeGreaterThanOrEqual(2);
      // Each notification says more than the one before, and what the run is doing.
      for (let i = 1; i < progress.length; i++) expect(progress[i].progress).toBeGreaterThan(progress[i - 1].progress);
      expect(progress.some((p) => p.message?.includes('node "'))).toBe(true);
    }
  });

  it('tells a 2026-07-28 client that listens that its tool list changed, and a 2025 session too', async () => {
    const modern = await v2(owner.key);
    let modernHeard = 0;
    modern.setNotificationHandler('notifications/tools/list_changed', async () => void modernHeard++);
    const subscription = await modern.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
    closers.push(() => subscription.close());

    const legacy = await v1(owner.key);
    let legacyHeard = 0;
    legacy.setNotificationHandler(
      (await import('@modelcontextprotocol/sdk/types.js')).ToolListChangedNotificationSchema,
      () => void legacyHeard++,
    );

    await publish('Brand new', echoing('brand_new'));
    await until(
      async () => [modernHeard, legacyHeard],
      ([m, l]) => m > 0 && l > 0,
    );
    expect((await modern.listTools()).tools.map((tool) => tool.name)).toContain('brand_new');
    // A user who cannot see the new tool hears nothing of it.
    const strangers = await v2(stranger.key);
    let strangerHeard = 0;
    strangers.setNotificationHandler('notifications/tools/list_changed', async () => void strangerHeard++);
    const theirs = await strangers.listen({ toolsListChanged: true });
    closers.push(() => theirs.close());
    await publish('Another', echoing('another_one'));
    await until(
      async () => modernHeard,
      (heard) => heard > 1,
    );
    expect(strangerHeard).toBe(0);
  });
});
