import {
  Client as V2Client,
  SSEClientTransport as V2SseTransport,
  StreamableHTTPClientTransport as V2HttpTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResult, ErrorCode as RpcErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { execFile, spawn } from 'node:child_process';
import { request } from 'undici';
import { join } from 'node:path';
import { statSync } from 'node:fs';
import { McpHttpEndpoints } from '../../src/mcp/transports/mcp-http-endpoints';
import { fixturePath, SEARCH_FIXTURES } from '../fixtures/fixtures';
import { BOOTSTRAP_KEY, startTestApp, TestApp, TestUser } from '../utils/test-app';
import { ensureStdioBuild, FixtureFiles, modernRpc, rawMcp, readSseEvents, serveFixtures, STDIO_ENTRY } from './mcp.helpers';

/**
 * The MCP server end to end, with the SDK's real Client over each of the three transports against
 * the running app: Streamable HTTP (/mcp), legacy SSE (/sse), and the stdio program (dist) calling
 * the REST API.
 */

const TOOL_INPUTS: Record<
  string,
  { properties: Record<string, 'string' | 'number' | 'boolean' | 'array' | 'object'>; required: string[] }
> = {
  service_list_collections: { properties: {}, required: [] },
  service_get_collection: { properties: { collection_id: 'string' }, required: ['collection_id'] },
  service_get_collection_stats: { properties: { collection_id: 'string' }, required: ['collection_id'] },
  // offset defaults to 0 (the first page), so it is optional.
  service_list_collection_files: { properties: { collection_id: 'string', offset: 'number' }, required: ['collection_id'] },
  service_add_file_to_collection: {
    properties: { collection_id: 'string', name: 'string', url: 'string' },
    required: ['collection_id', 'name', 'url'],
  },
  service_delete_file_from_collection: {
    properties: { collection_id: 'string', file_id: 'string' },
    required: ['collection_id', 'file_id'],
  },
  // filter is optional: the interface's required arguments stay as they are.
  service_search_collection: {
    properties: { collection_id: 'string', query: 'string', offset: 'number', filter: 'object', rerank: 'object' },
    required: ['collection_id', 'query'],
  },
  service_create_collection: { properties: { name: 'string' }, required: ['name'] },
  // Beside the interface's eight: one search across collections.
  service_search_collections: {
    properties: { collection_ids: 'array', all: 'boolean', query: 'string', offset: 'number', filter: 'object', rerank: 'object' },
    required: ['query'],
  },
};

const ALLOWED_ORIGIN = 'https://console.example.com';
const volcanoes = SEARCH_FIXTURES.find((f) => f.file === 'volcanoes.pdf')!;

type Kind = 'Streamable HTTP' | 'SSE' | 'stdio';
/** The doors as the SDK's v2 client goes through them: its default is the 2025 handshake; pinned, the 2026-07-28 era. */
type V2Door =
  'v2 Streamable HTTP, 2026-07-28' | 'v2 Streamable HTTP, 2025-11-25' | 'v2 SSE' | 'v2 stdio, 2026-07-28' | 'v2 stdio, 2025-11-25';
const V2_DOORS: V2Door[] = [
  'v2 Streamable HTTP, 2026-07-28',
  'v2 Streamable HTTP, 2025-11-25',
  'v2 SSE',
  'v2 stdio, 2026-07-28',
  'v2 stdio, 2025-11-25',
];
/** What the door tests use of a client, which the SDK's v1 and v2 clients both offer. */
type AnyClient = Pick<Client, 'callTool' | 'listTools' | 'close'>;

describe('MCP server', () => {
  let t: TestApp;
  let fixtures: FixtureFiles;
  let owner: TestUser;
  let stranger: TestUser;
  let strangersCollection: string;
  const clients: Client[] = [];

  const transportFor = (kind: Kind, key: string | null): Transport => {
    const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
    if (kind === 'Streamable HTTP') return new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers } });
    if (kind === 'SSE') return new SSEClientTransport(new URL('/sse', t.url), { requestInit: { headers } });
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', SERVICE_URL: t.url };
    if (key !== null) env.SERVICE_API_KEY = key;
    return new StdioClientTransport({ command: process.execPath, args: [STDIO_ENTRY], env, stderr: 'pipe' });
  };

  const connect = async (kind: Kind, key: string | null): Promise<Client> => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transportFor(kind, key));
    clients.push(client);
    return client;
  };

  const connectV2 = async (door: V2Door, key: string): Promise<AnyClient> => {
    const headers = { authorization: `Bearer ${key}` };
    const modern = door.endsWith('2026-07-28');
    const client = new V2Client(
      { name: 'e2e-v2', version: '1.0.0' },
      modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    );
    if (door.startsWith('v2 Streamable HTTP'))
      await client.connect(new V2HttpTransport(new URL('/mcp', t.url), { requestInit: { headers } }));
    else if (door === 'v2 SSE') await client.connect(new V2SseTransport(new URL('/sse', t.url), { requestInit: { headers } }));
    else
      await client.connect(
        new V2StdioTransport({
          command: process.execPath,
          args: [STDIO_ENTRY],
          env: { PATH: process.env.PATH ?? '', SERVICE_URL: t.url, SERVICE_API_KEY: key },
          stderr: 'pipe',
        }),
      );
    expect(client.getProtocolEra()).toBe(modern ? 'modern' : 'legacy');
    clients.push(client as unknown as Client);
    return client as unknown as AnyClient;
  };

  /**
   * Calls a tool that must succeed; returns its structured content after checking the text copy
   * (the first block) and that every other block links a resource this server serves.
   */
  const call = async (client: AnyClient, name: string, args: Record<string, unknown> = {}): Promise<any> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    const [text, ...links] = result.content;
    expect(text).toEqual({ type: 'text', text: JSON.stringify(result.structuredContent) });
    for (const link of links) expect(link).toMatchObject({ type: 'resource_link', uri: expect.stringMatching(/^collections:\/\//) });
    return result.structuredContent;
  };

  const failureText = async (client: AnyClient, name: string, args: Record<string, unknown>): Promise<string> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    return (result.content[0] as { text: string }).text;
  };

  /** The protocol error of a call (the v1 client's McpError, the v2 client's ProtocolError): -32602, said once. */
  const invalidParams = async (client: AnyClient, name: string, args: Record<string, unknown>): Promise<McpError> => {
    const error = await client.callTool({ name, arguments: args }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as McpError).code).toBe(RpcErrorCode.InvalidParams);
    expect((error as Error).message.match(/MCP error/g)?.length ?? 0).toBeLessThanOrEqual(1);
    return error as McpError;
  };

  beforeAll(async () => {
    ensureStdioBuild();
    fixtures = await serveFixtures();
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1', MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN });
    [owner, stranger] = await Promise.all([t.createUser('mcp-owner'), t.createUser('mcp-stranger')]);
    strangersCollection = (await t.request('POST', '/api/v1/collections', { key: stranger.key, body: { name: 'Private' } })).body.id;
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await t?.close();
    await fixtures?.close();
  });

  describe.each<Kind | V2Door>(['Streamable HTTP', 'SSE', 'stdio', ...V2_DOORS])('over %s', (kind) => {
    let client: AnyClient;

    beforeAll(async () => {
      client = kind.startsWith('v2 ') ? await connectV2(kind as V2Door, owner.key) : await connect(kind as Kind, owner.key);
    });

    it('lists exactly the eight tools and the search across collections, with the specified input schemas, output schemas and hints', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(TOOL_INPUTS).sort());
      for (const tool of tools) {
        const expected = TOOL_INPUTS[tool.name];
        const schema = tool.inputSchema as {
          type: string;
          properties: Record<string, { type: string }>;
          required?: string[];
          additionalProperties: unknown;
        };
        expect(schema.type).toBe('object');
        expect(schema.additionalProperties).toBe(false);
        expect(Object.fromEntries(Object.entries(schema.properties).map(([name, p]) => [name, p.type]))).toEqual(expected.properties);
        expect([...(schema.required ?? [])].sort()).toEqual([...expected.required].sort());
        expect(tool.outputSchema).toMatchObject({ type: 'object' });
        expect(tool.description!.length).toBeGreaterThan(80);
        expect(tool.annotations).toEqual(
          expect.objectContaining({
            readOnlyHint: expect.any(Boolean),
            destructiveHint: expect.any(Boolean),
            idempotentHint: expect.any(Boolean),
            openWorldHint: expect.any(Boolean),
          }),
        );
      }
      const byName = new Map(tools.map((tool) => [tool.name, tool.annotations!]));
      expect(byName.get('service_search_collection')).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(byName.get('service_delete_file_from_collection')).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
      });
      expect(byName.get('service_add_file_to_collection')).toMatchObject({
        readOnlyHint: false,
        idempotentHint: false,
        openWorldHint: true,
      });
      expect(byName.get('service_create_collection')).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    });

    it('creates a collection, adds files by URL, waits for indexed, searches, pages, counts and deletes', async () => {
      const collection = await call(client, 'service_create_collection', { name: `  Geology over ${kind}  ` });
      expect(collection).toEqual({
        id: expect.stringMatching(/^col_/),
        name: `Geology over ${kind}`,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        role: 'owner',
      });
      const collection_id = collection.id;
      expect(await call(client, 'service_get_collection', { collection_id })).toEqual(collection);
      const listed = await call(client, 'service_list_collections');
      expect(listed.collections).toContainEqual(collection);
      expect(listed.total).toBe(listed.collections.length);

      const pdf = await call(client, 'service_add_file_to_collection', {
        collection_id,
        name: 'volcanoes.pdf',
        url: `${fixtures.url}/volcanoes.pdf`,
      });
      expect(pdf).toMatchObject({ id: expect.stringMatching(/^fle_/), name: 'volcanoes.pdf', status: 'pending' });
      const note = await call(client, 'service_add_file_to_collection', {
        collection_id,
        name: 'note.txt',
        url: `data:text/plain;base64,${Buffer.from('Bread rises because yeast ferments sugars into gas.').toString('base64')}`,
      });

      // A file is searchable once indexed: poll the listing as a model would.
      const deadline = Date.now() + 120_000;
      let files: any;
      do {
        files = await call(client, 'service_list_collection_files', { collection_id, offset: 0 });
        if (files.files.every((f: { status: string }) => f.status === 'indexed' || f.status === 'error')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      } while (Date.now() < deadline);
      expect(files).toMatchObject({ total: 2, offset: 0, nextOffset: null });
      expect(files.files.map((f: { status: string }) => f.status)).toEqual(['indexed', 'indexed']);
      expect(files.files.find((f: { id: string }) => f.id === pdf.id)).toMatchObject({
        type: 'application/pdf',
        size: statSync(fixturePath('volcanoes.pdf')).size,
      });

      const second = await call(client, 'service_list_collection_files', { collection_id, offset: 1 });
      expect(second).toEqual({ files: [files.files[1]], total: 2, offset: 1, nextOffset: null });
      expect(await call(client, 'service_list_collection_files', { collection_id, offset: 5 })).toEqual({
        files: [],
        total: 2,
        offset: 5,
        nextOffset: null,
      });

      const found = await call(client, 'service_search_collection', { collection_id, query: volcanoes.question, offset: 0 });
      expect(found.offset).toBe(0);
      expect(found.result.length).toBeGreaterThan(0);
      expect(found.result.length).toBeLessThanOrEqual(10);
      expect(found.result[0]).toMatchObject({
        id: expect.any(String),
        distance: expect.any(Number),
        fileId: pdf.id,
        fileName: 'volcanoes.pdf',
      });
      expect(found.result[0].content).toContain(volcanoes.expectedSnippet);
      const later = await call(client, 'service_search_collection', { collection_id, query: volcanoes.question, offset: 1 });
      expect(later.result[0]).toEqual(found.result[1]);

      const stats = await call(client, 'service_get_collection_stats', { collection_id });
      expect(stats).toMatchObject({ collectionId: collection_id, files: { total: 2, indexed: 2, pending: 0, processing: 0, error: 0 } });
      expect(stats.chunks).toBeGreaterThan(0);

      expect(await call(client, 'service_delete_file_from_collection', { collection_id, file_id: note.id })).toEqual({
        deleted: true,
        collectionId: collection_id,
        fileId: note.id,
      });
      const after = await call(client, 'service_list_collection_files', { collection_id, offset: 0 });
      expect(after.files.map((f: { id: string }) => f.id)).toEqual([pdf.id]);
      expect(await failureText(client, 'service_delete_file_from_collection', { collection_id, file_id: note.id })).toMatch(
        /^NOT_FOUND: .*service_list_collection_files/,
      );
    }, 180_000);

    it("answers another user's collection as not found, with a next step for the model", async () => {
      for (const [name, args] of [
        ['service_get_collection', { collection_id: strangersCollection }],
        ['service_get_collection_stats', { collection_id: strangersCollection }],
        ['service_list_collection_files', { collection_id: strangersCollection, offset: 0 }],
        ['service_search_collection', { collection_id: strangersCollection, query: 'anything', offset: 0 }],
        ['service_add_file_to_collection', { collection_id: strangersCollection, name: 'a.txt', url: 'data:text/plain,hello' }],
      ] as const) {
        const text = await failureText(client, name, args);
        expect(text).toContain(`NOT_FOUND: collection ${strangersCollection} not found`);
        expect(text).toContain('service_list_collections');
      }
      const listed = await call(client, 'service_list_collections');
      expect(listed.collections.map((c: { id: string }) => c.id)).not.toContain(strangersCollection);
    });

    // MCP 2025-11-25, server/tools "Error Handling": input validation errors are Tool Execution
    // Errors (isError, for the model to correct), an unknown tool a protocol error (-32602).
    it('refuses malformed arguments with an isError result naming each, and an unknown tool with JSON-RPC InvalidParams', async () => {
      const refused = async (name: string, args: Record<string, unknown>, argument: string) => {
        const text = await failureText(client, name, args);
        expect(text).toMatch(/^VALIDATION_FAILED: /);
        expect(text).toContain(`${argument}: `);
      };
      await refused('service_get_collection', {}, 'collection_id');
      await refused('service_get_collection', { collection_id: 42 }, 'collection_id');
      await refused('service_list_collections', { unexpected: true }, 'unexpected');
      await refused('service_list_collection_files', { collection_id: 'col_x', offset: -1 }, 'offset');
      await refused('service_list_collection_files', { collection_id: 'col_x', offset: 1.5 }, 'offset');
      await refused('service_search_collection', { collection_id: 'col_x', query: 'q', offset: 'first' }, 'offset');
      await refused('service_add_file_to_collection', { collection_id: 'col_x', name: 'a', url: 'not a url' }, 'url');
      await refused('service_create_collection', { name: '   ' }, 'name');
      await refused('service_create_collection', { name: 'ok', owner: 'someone-else' }, 'owner');
      const unknown = await invalidParams(client, 'service_no_such_tool', {});
      expect(unknown.message).toContain('Unknown tool service_no_such_tool');

      const { collections } = await call(client, 'service_list_collections');
      const mine = collections[0].id;
      const blocked = await failureText(client, 'service_add_file_to_collection', {
        collection_id: mine,
        name: 'x.pdf',
        url: 'ftp://example.com/x.pdf',
      });
      expect(blocked).toMatch(/^(VALIDATION_FAILED|FETCH_BLOCKED): /);
    });
  });

  describe('authentication', () => {
    const initialize = (headers: Record<string, string>) => rawMcp(t.url, 'POST', headers, rawMcp.initializeBody);

    it('answers 401 with WWW-Authenticate on every remote endpoint without a valid key', async () => {
      for (const headers of [{}, { authorization: 'Bearer wcs_not_a_key' }, { authorization: `Basic ${owner.key}` }] as Record<
        string,
        string
      >[]) {
        const post = await initialize(headers);
        expect(post.status).toBe(401);
        expect(post.headers.get('www-authenticate')).toMatch(/^Bearer realm="service"/);
        expect(post.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, data: { code: 'UNAUTHENTICATED' } }, id: null });
        for (const [method, path] of [
          ['GET', '/mcp'],
          ['DELETE', '/mcp'],
          ['GET', '/sse'],
          ['POST', '/messages?sessionId=x'],
        ] as const) {
          const res = await fetch(t.url + path, {
            method,
            headers: { ...headers, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
            body: method === 'POST' ? '{}' : undefined,
          });
          expect(res.status).toBe(401);
          expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
          await res.body?.cancel();
        }
      }
      expect((await initialize({ authorization: 'Bearer wcs_not_a_key' })).headers.get('www-authenticate')).toContain(
        'error="invalid_token"',
      );
    });

    it('accepts the key as Authorization: Bearer or x-api-key', async () => {
      expect((await initialize({ authorization: `Bearer ${owner.key}` })).status).toBe(200);
      expect((await initialize({ 'x-api-key': owner.key })).status).toBe(200);
    });

    it.each<Kind>(['Streamable HTTP', 'SSE'])('refuses an SDK client without a key or with a wrong one over %s', async (kind) => {
      await expect(connect(kind, null)).rejects.toThrow(/401|Unauthorized/i);
      await expect(connect(kind, 'wcs_wrong_key_0123456789')).rejects.toThrow(/401|Unauthorized/i);
    });

    it('stdio: a missing SERVICE_API_KEY is a clear message on stderr and exit code 1, with nothing on stdout', async () => {
      const child = spawn(process.execPath, [STDIO_ENTRY], {
        env: { PATH: process.env.PATH ?? '', SERVICE_URL: t.url },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr).toContain('SERVICE_API_KEY is not set');
    });

    it('stdio: a wrong key makes every tool call an isError result naming SERVICE_API_KEY', async () => {
      const client = await connect('stdio', 'wcs_wrong_key_0123456789');
      expect((await client.listTools()).tools).toHaveLength(9);
      const text = await failureText(client, 'service_list_collections', {});
      expect(text).toMatch(/^UNAUTHENTICATED: .*SERVICE_API_KEY/);
    });

    it('stdio: writes nothing but JSON-RPC messages to stdout', async () => {
      const child = spawn(process.execPath, [STDIO_ENTRY], {
        env: { PATH: process.env.PATH ?? '', SERVICE_URL: t.url, SERVICE_API_KEY: owner.key },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
      send(JSON.parse(rawMcp.initializeBody));
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'service_list_collections', arguments: {} } });
      send({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'service_get_collection', arguments: { collection_id: 'col_missing' } },
      });
      const deadline = Date.now() + 20_000;
      while (stdout.split('\n').filter(Boolean).length < 3 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      child.stdin.end();
      await new Promise((resolve) => child.on('exit', resolve));
      const lines = stdout.split('\n').filter(Boolean);
      expect(lines.map((line) => JSON.parse(line)).map((m) => [m.jsonrpc, m.id])).toEqual([
        ['2.0', 1],
        ['2.0', 2],
        ['2.0', 3],
      ]);
    });

    it('stdio: `npm run --silent mcp:stdio`, as documented, writes nothing but JSON-RPC messages to stdout', async () => {
      const child = spawn('npm', ['run', '--silent', 'mcp:stdio'], {
        cwd: join(__dirname, '..', '..'),
        env: { ...process.env, SERVICE_URL: t.url, SERVICE_API_KEY: owner.key },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
      send(JSON.parse(rawMcp.initializeBody));
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      // Ends when both answers are in (or the suite's timeout says they never came).
      while (!stdout.includes('"id":2')) await new Promise((resolve) => setTimeout(resolve, 50));
      child.stdin.end();
      await new Promise((resolve) => child.on('exit', resolve));
      const lines = stdout.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThanOrEqual(2);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
      expect(lines.map((line) => JSON.parse(line).id).filter((id) => id !== undefined)).toEqual([1, 2]);
    });
  });

  describe('sessions', () => {
    const post = (headers: Record<string, string>, body: string) => rawMcp(t.url, 'POST', headers, body);
    const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
    const bearer = (user: TestUser) => ({ authorization: `Bearer ${user.key}` });

    it('gives each session a long random id', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const res = await post(bearer(owner), rawMcp.initializeBody);
        ids.add(res.headers.get('mcp-session-id')!);
      }
      expect(ids.size).toBe(3);
      for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it("refuses another user's Streamable HTTP session id with 404, leaving the session usable by its owner", async () => {
      const client = await connect('Streamable HTTP', owner.key);
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
      const foreign = { ...bearer(stranger), 'mcp-session-id': sessionId };
      const stolen = await post(foreign, toolsList);
      expect(stolen.status).toBe(404);
      expect(stolen.body).toMatchObject({ error: { code: -32001, message: expect.stringContaining('Session not found') } });
      expect((await rawMcp(t.url, 'GET', foreign)).status).toBe(404);
      expect((await rawMcp(t.url, 'DELETE', foreign)).status).toBe(404);
      expect((await client.listTools()).tools).toHaveLength(9);
      const own = await post({ ...bearer(owner), 'mcp-session-id': sessionId }, toolsList);
      expect(own.status).toBe(200);
      expect(own.body.result.tools).toHaveLength(9);
    });

    it("refuses another user's SSE session id with 404", async () => {
      const stream = await readSseEvents(`${t.url}/sse`, bearer(owner));
      try {
        const endpoint = await stream.next('endpoint');
        const sessionId = new URL(endpoint, t.url).searchParams.get('sessionId')!;
        const message = (user: TestUser) =>
          fetch(`${t.url}/messages?sessionId=${encodeURIComponent(sessionId)}`, {
            method: 'POST',
            headers: { ...bearer(user), 'content-type': 'application/json' },
            body: rawMcp.initializeBody,
          });
        const stolen = await message(stranger);
        expect(stolen.status).toBe(404);
        expect((await message(owner)).status).toBe(202);
        expect(JSON.parse(await stream.next('message'))).toMatchObject({ id: 1, result: { serverInfo: expect.any(Object) } });
        // The Streamable HTTP endpoint does not know SSE sessions, and the other way round.
        expect((await post({ ...bearer(owner), 'mcp-session-id': sessionId }, toolsList)).status).toBe(404);
      } finally {
        stream.close();
      }
    });

    it('ends a session on DELETE; its id is then unknown', async () => {
      const client = await connect('Streamable HTTP', owner.key);
      const transport = client.transport as StreamableHTTPClientTransport;
      const sessionId = transport.sessionId!;
      const endpoints = t.app.get(McpHttpEndpoints);
      const open = endpoints.sessionCount;
      await transport.terminateSession();
      expect(endpoints.sessionCount).toBe(open - 1);
      expect((await post({ ...bearer(owner), 'mcp-session-id': sessionId }, toolsList)).status).toBe(404);
    });

    it('answers every request of a batch, a notification with 202, and refuses an unknown protocol version', async () => {
      const opened = await post(bearer(owner), rawMcp.initializeBody);
      const session = { ...bearer(owner), 'mcp-session-id': opened.headers.get('mcp-session-id')! };
      const batch = await post(
        session,
        JSON.stringify([
          {
            jsonrpc: '2.0',
            id: 'b',
            method: 'tools/call',
            params: { name: 'service_get_collection', arguments: { collection_id: strangersCollection } },
          },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 'a', method: 'ping' },
        ]),
      );
      expect(batch.status).toBe(200);
      // On the batch's event stream, each answer as soon as it is ready.
      expect(batch.body.map((m: { id: string }) => m.id).sort()).toEqual(['a', 'b']);
      expect(batch.body.find((m: { id: string }) => m.id === 'b').result).toMatchObject({ isError: true });
      const notified = await post(session, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      expect(notified.status).toBe(202);
      expect((await post({ ...session, 'mcp-protocol-version': '1999-01-01' }, toolsList)).status).toBe(400);
    });

    it('answers the other requests of a POST on its stream while leaving a cancelled one unanswered, as the specification asks', async () => {
      const opened = await post(bearer(owner), rawMcp.initializeBody);
      const session = {
        ...bearer(owner),
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-session-id': opened.headers.get('mcp-session-id')!,
      };
      const stream = await readSseEvents(`${t.url}/mcp`, session, {
        method: 'POST',
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 'p', method: 'ping' },
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'p', reason: 'changed my mind' } },
          { jsonrpc: '2.0', id: 'q', method: 'ping' },
        ]),
      });
      try {
        const answers: { id: string }[] = [];
        while (!answers.some((a) => a.id === 'q')) answers.push(JSON.parse(await stream.next('message')));
        expect(answers).toEqual([{ jsonrpc: '2.0', id: 'q', result: {} }]);
      } finally {
        stream.close();
      }
    });

    it('gives an initialize that still carries an expired session id a new session', async () => {
      const res = await post({ ...bearer(owner), 'mcp-session-id': 'expired-long-ago' }, rawMcp.initializeBody);
      expect(res.status).toBe(200);
      expect(res.headers.get('mcp-session-id')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('asks for initialize when a request has no session id', async () => {
      const res = await post(bearer(owner), toolsList);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    });

    // The SDK checks a spec method's params before the service's handler runs, and answers a misfit
    // as an internal error carrying its schema library's dump: here, InvalidParams naming the field.
    it.each([
      ['resources/read', { uri: 5 }, 'params.uri: Invalid input: expected string, received number'],
      ['resources/read', {}, 'params.uri: Invalid input: expected string, received undefined'],
      ['prompts/get', { arguments: { collection_id: 'col_x' } }, 'params.name: Invalid input: expected string, received undefined'],
      ['tools/list', { cursor: 5 }, 'params.cursor: Invalid input: expected string, received number'],
      [
        'completion/complete',
        { ref: { type: 'ref/prompt', name: 'summarize_file' }, argument: { name: 'file_id', value: 5 } },
        'params.argument.value: Invalid input: expected string, received number',
      ],
    ])('refuses %s with params %j as InvalidParams naming the field, in a 2025 session and in 2026-07-28', async (method, params, says) => {
      const opened = await post(bearer(owner), rawMcp.initializeBody);
      const session = { ...bearer(owner), 'mcp-session-id': opened.headers.get('mcp-session-id')! };
      const legacy = await post(session, JSON.stringify({ jsonrpc: '2.0', id: 2, method, params }));
      const modern = await modernRpc(t.url, owner.key, method, params);
      for (const answer of [legacy.body, modern.message])
        expect(answer).toEqual({
          jsonrpc: '2.0',
          id: expect.anything(),
          error: { code: -32602, message: `Invalid ${method} request: ${says}` },
        });
    });

    it('completes nothing for another prompt, refuses completion of a collection the caller cannot read, and a task that is no task', async () => {
      const complete = (params: Record<string, unknown>) => modernRpc(t.url, owner.key, 'completion/complete', params);
      const files = { ref: { type: 'ref/prompt', name: 'summarize_file' }, argument: { name: 'file_id', value: '' } };
      // Another server's prompt has nothing to complete here (the conformance suite asks for its own).
      expect(
        (await complete({ ...files, ref: { type: 'ref/prompt', name: 'nope' }, context: { arguments: { collection_id: 'col_nope' } } }))
          .message.result,
      ).toMatchObject({
        completion: { values: [], total: 0, hasMore: false },
      });
      for (const collection of [strangersCollection, 'col_nope']) {
        const answer = await complete({ ...files, context: { arguments: { collection_id: collection } } });
        expect(answer.message.error).toEqual({ code: -32602, message: `NOT_FOUND: collection ${collection} not found` });
      }
      const opened = await post(bearer(owner), rawMcp.initializeBody);
      const session = { ...bearer(owner), 'mcp-session-id': opened.headers.get('mcp-session-id')! };
      for (const task of ['x', { ttl: -1 }]) {
        const call = { name: 'service_list_collections', arguments: {}, task };
        const answer = await post(session, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: call }));
        expect(answer.body.error).toEqual({
          code: -32602,
          message: 'Invalid tools/call request: task must be an object, its ttl a whole number of ms >= 0',
        });
      }
    });

    it('refuses an SSE message that is not one JSON-RPC message with a JSON-RPC Invalid Request naming what to send', async () => {
      const stream = await readSseEvents(`${t.url}/sse`, bearer(owner));
      try {
        const endpoint = await stream.next('endpoint');
        const send = (body: string) =>
          request(new URL(endpoint, t.url), { method: 'POST', headers: { ...bearer(owner), 'content-type': 'application/json' }, body });
        for (const body of ['null', '5', '[]', '{"jsonrpc": "2.0", "id": {}, "method": "ping"}']) {
          const answer = await send(body);
          expect(answer.statusCode).toBe(400);
          expect(await answer.body.json()).toMatchObject({
            jsonrpc: '2.0',
            error: { code: -32600, message: expect.stringContaining('a POST carries one JSON-RPC 2.0 message') },
            id: null,
          });
        }
        const ping = await send('{"jsonrpc": "2.0", "id": 9, "method": "ping"}');
        expect(ping.statusCode).toBe(202);
        await ping.body.dump();
      } finally {
        stream.close();
      }
    });

    it('answers a malformed body with a JSON-RPC parse error', async () => {
      const res = await post(bearer(owner), '{"jsonrpc": "2.0", ');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    });

    it('refuses another media type (415), a body over the limit (413) and a __proto__ key (parse error), in JSON-RPC', async () => {
      const notJson = await post({ ...bearer(owner), 'content-type': 'text/plain' }, rawMcp.initializeBody);
      expect(notJson.status).toBe(415);
      expect(notJson.body).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, message: expect.stringContaining('application/json') },
        id: null,
      });
      const huge = await post(
        bearer(owner),
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } }),
      );
      expect(huge.status).toBe(413);
      expect(huge.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('Payload Too Large') } });
      const poisoned = await post(bearer(owner), '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"__proto__":{"admin":true}}}');
      expect(poisoned.status).toBe(400);
      expect(poisoned.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
      const deep = await post(
        bearer(owner),
        `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":${'['.repeat(2000)}${']'.repeat(2000)}}}`,
      );
      expect(deep.status).toBe(400);
      expect(deep.body).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32600, message: expect.stringContaining('nests deeper than 128 levels') },
        id: null,
      });
    });

    it('accepts JSON with a charset, and names every answer with x-request-id (an incoming one is kept)', async () => {
      const opened = await post(
        { ...bearer(owner), 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'trace-42' },
        rawMcp.initializeBody,
      );
      expect(opened.status).toBe(200);
      expect(opened.headers.get('x-request-id')).toBe('trace-42');
      const refused = await post({}, rawMcp.initializeBody);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('x-request-id')).toMatch(/^req_/);
    });

    it('serves two clients at once, each with its own identity', async () => {
      for (const kind of ['Streamable HTTP', 'SSE'] as const) {
        const [a, b] = await Promise.all([connect(kind, owner.key), connect(kind, stranger.key)]);
        const [fromA, fromB] = await Promise.all([
          Promise.all(Array.from({ length: 5 }, () => call(a, 'service_list_collections'))),
          Promise.all(Array.from({ length: 5 }, () => call(b, 'service_get_collection', { collection_id: strangersCollection }))),
        ]);
        for (const listed of fromA) expect(listed.collections.map((c: { id: string }) => c.id)).not.toContain(strangersCollection);
        for (const got of fromB) expect(got).toMatchObject({ id: strangersCollection, role: 'owner' });
        expect(await failureText(a, 'service_get_collection', { collection_id: strangersCollection })).toMatch(/^NOT_FOUND/);
      }
    });
  });

  describe('Origin', () => {
    const headers = (origin: string) => ({ authorization: `Bearer ${owner.key}`, origin });

    it('refuses a request from an origin that is not configured with 403', async () => {
      const res = await rawMcp(t.url, 'POST', headers('https://evil.example'), rawMcp.initializeBody);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
      const sse = await fetch(`${t.url}/sse`, { headers: headers('http://localhost:6666') });
      expect(sse.status).toBe(403);
      await sse.body?.cancel();
      const preflight = await fetch(`${t.url}/mcp`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
      expect(preflight.status).toBe(403);
    });

    it('serves a configured origin, with the CORS headers a browser client needs', async () => {
      const res = await rawMcp(t.url, 'POST', headers(ALLOWED_ORIGIN), rawMcp.initializeBody);
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
      expect(res.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
      const preflight = await fetch(`${t.url}/mcp`, {
        method: 'OPTIONS',
        headers: {
          origin: ALLOWED_ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, mcp-session-id',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Mcp-Session-Id/);
    });
  });
});

describe('MCP session lifetime', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ MCP_SESSION_IDLE_MS: '1000', MCP_MAX_SESSIONS_PER_USER: '3' });
  });
  afterAll(() => t?.close());

  const bearer = () => ({ authorization: `Bearer ${BOOTSTRAP_KEY}` });
  const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });

  it('expires a session that had no request and no open stream for MCP_SESSION_IDLE_MS', async () => {
    const opened = await rawMcp(t.url, 'POST', bearer(), rawMcp.initializeBody);
    const sessionId = opened.headers.get('mcp-session-id')!;
    const session = { ...bearer(), 'mcp-session-id': sessionId };
    expect((await rawMcp(t.url, 'POST', session, toolsList)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await rawMcp(t.url, 'POST', session, toolsList)).status).toBe(404);
  });

  it('ends the least recently active session of a user who opens more than MCP_MAX_SESSIONS_PER_USER', async () => {
    const user = await t.createUser('many-sessions');
    const key = { authorization: `Bearer ${user.key}` };
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await rawMcp(t.url, 'POST', key, rawMcp.initializeBody)).headers.get('mcp-session-id')!);
    const statuses = await Promise.all(
      ids.map(async (id) => (await rawMcp(t.url, 'POST', { ...key, 'mcp-session-id': id }, toolsList)).status),
    );
    expect(statuses).toEqual([404, 200, 200, 200]);
  });

  it('keeps a session whose client holds its stream open, and closes every session at shutdown', async () => {
    const opened = await rawMcp(t.url, 'POST', bearer(), rawMcp.initializeBody);
    const session = { ...bearer(), 'mcp-session-id': opened.headers.get('mcp-session-id')! };
    const listening = await readSseEvents(`${t.url}/mcp`, session);
    const sse = await readSseEvents(`${t.url}/sse`, bearer());
    await sse.next('endpoint');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await rawMcp(t.url, 'POST', session, toolsList)).status).toBe(200);

    await t.close();
    t = undefined as unknown as TestApp;
    await expect(Promise.all([listening.ended, sse.ended])).resolves.toBeDefined();
  });
});

describe('MCP sessions end with their API key', () => {
  let t: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    ensureStdioBuild();
    t = await startTestApp();
    user = await t.createUser('revoked-later');
  }, 180_000);
  afterAll(() => t?.close());

  /** A second key of the user, issued through the REST door. */
  const issueKey = async () => {
    const res = await t.request('POST', '/api/v1/api-keys', { key: user.key, body: { name: 'to revoke' } });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, key: res.body.key as string };
  };

  /** An SSE session and a Streamable HTTP session with its GET stream, all open with `key`. */
  const openStreams = async (key: string) => {
    const bearer = { authorization: `Bearer ${key}` };
    const sse = await readSseEvents(`${t.url}/sse`, bearer);
    await sse.next('endpoint');
    const opened = await rawMcp(t.url, 'POST', bearer, rawMcp.initializeBody);
    const sessionId = opened.headers.get('mcp-session-id')!;
    const stream = await readSseEvents(`${t.url}/mcp`, { ...bearer, 'mcp-session-id': sessionId });
    return { sse, stream, sessionId };
  };

  it('ends the sessions and streams of a key revoked through the REST API', async () => {
    const second = await issueKey();
    const { sse, stream, sessionId } = await openStreams(second.key);
    const untouched = await openStreams(user.key);
    expect((await t.request('DELETE', `/api/v1/api-keys/${second.id}`, { key: user.key })).status).toBeLessThan(300);
    await Promise.all([sse.ended, stream.ended]);
    // The session is gone, even for another key of the same user.
    const after = await rawMcp(
      t.url,
      'POST',
      { authorization: `Bearer ${user.key}`, 'mcp-session-id': sessionId },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    );
    expect(after.status).toBe(404);
    // The user's other key keeps its own.
    const alive = await rawMcp(
      t.url,
      'POST',
      { authorization: `Bearer ${user.key}`, 'mcp-session-id': untouched.sessionId },
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    );
    expect(alive.status).toBe(200);
    untouched.sse.close();
    untouched.stream.close();
  });

  it('ends them when the key is revoked by the CLI, another process on the same data', async () => {
    const second = await issueKey();
    const { sse, stream } = await openStreams(second.key);
    const revoked = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [join(__dirname, '..', '..', 'dist', 'src', 'cli.js'), 'key:revoke', '--key', second.id],
        { env: { PATH: process.env.PATH ?? '', DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' } },
        (error, _out, stderr) => resolve({ code: error ? 1 : 0, stderr }),
      ),
    );
    expect(revoked).toEqual({ code: 0, stderr: '' });
    await Promise.all([sse.ended, stream.ended]);
  });
});

describe('MCP on a loopback HOST', () => {
  let loopback: TestApp;
  let everywhere: TestApp;

  beforeAll(async () => {
    [loopback, everywhere] = await Promise.all([startTestApp({ HOST: '127.0.0.1' }), startTestApp({ HOST: '0.0.0.0' })]);
  }, 180_000);
  afterAll(() => Promise.all([loopback?.close(), everywhere?.close()]));

  const initializeFrom = (app: TestApp, origin: string) =>
    rawMcp(app.url, 'POST', { authorization: `Bearer ${BOOTSTRAP_KEY}`, origin }, rawMcp.initializeBody);

  it('accepts the pages of this machine (http://localhost:*, 127.0.0.1, [::1]) without MCP_ALLOWED_ORIGINS', async () => {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:8080', 'http://[::1]:3000']) {
      const res = await initializeFrom(loopback, origin);
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    }
    expect((await initializeFrom(loopback, 'http://evil.example.com')).status).toBe(403);
  });

  it('refuses a request whose Host is not this machine (a DNS-rebinding page), on every door, however often it comes', async () => {
    const port = new URL(loopback.url).port;
    const asHost = async (host: string, path = '/mcp', method: 'POST' | 'GET' | 'OPTIONS' = 'POST') => {
      const res = await request(`${loopback.url}${path}`, {
        method,
        headers: {
          host,
          authorization: `Bearer ${BOOTSTRAP_KEY}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: method === 'POST' ? rawMcp.initializeBody : undefined,
      });
      const text = await res.body.text();
      return { status: res.statusCode, text };
    };
    for (let i = 0; i < 2; i++) {
      const refused = await asHost(`rebound.example:${port}`);
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.text)).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, message: expect.stringContaining('rebound.example') },
      });
      expect((await asHost(`localhost:${port}`)).status).toBe(200);
    }
    expect((await asHost('rebound.example', '/sse', 'GET')).status).toBe(403);
    expect((await asHost('rebound.example', '/mcp', 'OPTIONS')).status).toBe(403);
    expect((await asHost(`127.0.0.1:${port}`)).status).toBe(200);
  });

  it('refuses them on any other HOST', async () => {
    const res = await initializeFrom(everywhere, 'http://localhost:5173');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: { message: expect.stringContaining('MCP_ALLOWED_ORIGINS') } });
  });
});
