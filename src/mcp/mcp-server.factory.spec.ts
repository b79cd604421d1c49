import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResult, ErrorCode as RpcErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppError, ErrorCode } from '../common/app-error';
import type { CollectionsBackend } from './collections-backend.port';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer, toolRequestShortcut } from './mcp-server.factory';

const collection = { id: 'col_1', name: 'Notes', createdAt: '2025-01-01T00:00:00.000Z', updatedAt: '2025-01-01T00:00:00.000Z', role: 'owner' };
const file = { id: 'fle_1', name: 'a.pdf', type: 'application/pdf', size: 10, status: 'indexed' as const, createdAt: '2025-01-01T00:00:00.000Z' };
const hit = (n: number) => ({ id: `psg_${n}`, content: `passage ${n}`, distance: n / 100, fileId: 'fle_1', fileName: 'a.pdf', chunkIndex: n });

function fakeBackend(overrides: Partial<CollectionsBackend> = {}): jest.Mocked<CollectionsBackend> {
  return {
    listCollections: jest.fn(async () => ({ items: [collection], total: 1 })),
    getCollection: jest.fn(async () => collection),
    getCollectionStats: jest.fn(async () => ({
      collectionId: 'col_1',
      files: { total: 1, pending: 0, processing: 0, indexed: 1, error: 0 },
      bytes: 10,
      chunks: 3,
      characters: 900,
    })),
    createCollection: jest.fn(async (name: string) => ({ ...collection, name })),
    listFiles: jest.fn(async () => ({ items: [file], total: 1 })),
    addFile: jest.fn(async () => ({ ...file, status: 'pending' as const })),
    deleteFile: jest.fn(async () => undefined),
    search: jest.fn(async () => ({ result: [hit(0)] })),
    listWorkflowTools: jest.fn(async () => []),
    callWorkflowTool: jest.fn(async (name: string) => Promise.reject(AppError.notFound('workflow tool', name))),
    ...overrides,
  } as jest.Mocked<CollectionsBackend>;
}

describe('the MCP server built from the tool definitions', () => {
  let backend: jest.Mocked<CollectionsBackend>;
  let unexpected: jest.Mock;
  let client: Client;

  beforeEach(async () => {
    backend = fakeBackend();
    unexpected = jest.fn();
    const server = createMcpServer({ backend: () => backend, onUnexpectedError: unexpected });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'spec', version: '1.0.0' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  });
  afterEach(() => client.close());

  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const rejection = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }).then(
      () => undefined,
      (error: unknown) => error as McpError,
    );

  it('emits strict JSON Schemas: exactly the interface properties, required, no additional properties', async () => {
    const { tools } = await client.listTools();
    const search = tools.find((t) => t.name === 'service_search_collection')!;
    expect(search.inputSchema).toEqual({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        collection_id: { type: 'string', minLength: 1, maxLength: 200, description: expect.any(String) },
        // The limits of the REST search body (SearchDto), the class that validates both doors.
        query: { type: 'string', minLength: 1, maxLength: 8192, description: expect.any(String) },
        offset: { type: 'number', multipleOf: 1, minimum: 0, maximum: 1000, default: 0, description: expect.any(String) },
      },
      required: ['collection_id', 'query'],
      additionalProperties: false,
    });
    const list = tools.find((t) => t.name === 'service_list_collections')!;
    expect(list.inputSchema).toEqual({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: {}, additionalProperties: false });
    for (const tool of tools) {
      expect(tool.outputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.title).toEqual(expect.any(String));
    }
  });

  it('returns the result as JSON text and as structuredContent, projected onto the declared fields', async () => {
    backend.getCollection.mockResolvedValueOnce({ ...collection, ownerId: 'usr_secret' } as never);
    const result = await call('service_get_collection', { collection_id: 'col_1' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(collection);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(collection) }]);
  });

  it('lists at most 100 files from offset and says where the next page starts', async () => {
    backend.listFiles.mockResolvedValueOnce({ items: Array.from({ length: 100 }, (_, i) => ({ ...file, id: `fle_${i}` })), total: 250 });
    const first = await call('service_list_collection_files', { collection_id: 'col_1', offset: 100 });
    expect(backend.listFiles).toHaveBeenCalledWith('col_1', { offset: 100, limit: 100 });
    expect(first.structuredContent).toMatchObject({ total: 250, offset: 100, nextOffset: 200 });
    backend.listFiles.mockResolvedValueOnce({ items: [file], total: 201 });
    expect((await call('service_list_collection_files', { collection_id: 'col_1', offset: 200 })).structuredContent).toMatchObject({ nextOffset: null });
  });

  it('searches for ten results from offset', async () => {
    backend.search.mockResolvedValueOnce({ result: Array.from({ length: 10 }, (_, i) => hit(i)) });
    const result = await call('service_search_collection', { collection_id: 'col_1', query: 'why', offset: 20 });
    expect(backend.search).toHaveBeenCalledWith('col_1', { text: 'why', topK: 10, offset: 20 });
    expect(result.structuredContent).toMatchObject({ offset: 20, nextOffset: 30 });
    expect((result.structuredContent as { result: unknown[] }).result).toHaveLength(10);
  });

  it('starts at offset 0 when the search or the listing leaves it out', async () => {
    backend.search.mockResolvedValueOnce({ result: [hit(0)] });
    await call('service_search_collection', { collection_id: 'col_1', query: 'why' });
    expect(backend.search).toHaveBeenLastCalledWith('col_1', { text: 'why', topK: 10, offset: 0 });
    backend.listFiles.mockResolvedValueOnce({ items: [file], total: 1 });
    expect((await call('service_list_collection_files', { collection_id: 'col_1' })).structuredContent).toMatchObject({ offset: 0, nextOffset: null });
  });

  it('answers malformed arguments with JSON-RPC InvalidParams, naming each bad field, before calling the backend', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['service_get_collection', {}, /collection_id: is required$/],
      ['service_list_collection_files', { collection_id: 'col_1', offset: 'third' }, /offset: offset must be an integer number/],
      ['service_list_collection_files', { collection_id: 'col_1', offset: 2.5 }, /offset: offset must be an integer number/],
      ['service_create_collection', { name: 'x', extra: 1 }, /extra: property extra should not exist/],
      ['service_add_file_to_collection', { collection_id: 'col_1', name: 'a.pdf', url: 'nope' }, /url: url must be an absolute URL/],
      // The search body's field is `text`; the tool's argument is `query`, and the refusal says so.
      ['service_search_collection', { collection_id: 'col_1', query: 'q'.repeat(8193) }, /query: query must be shorter than or equal to 8192 characters$/],
      ['service_search_collection', { collection_id: 'col_1', text: 'why' }, /query: is required; text: property text should not exist/],
      ['service_unknown', {}, /Unknown tool service_unknown/],
    ];
    for (const [name, args, message] of cases) {
      const error = await rejection(name, args);
      expect(error).toBeInstanceOf(McpError);
      expect(error!.code).toBe(RpcErrorCode.InvalidParams);
      expect(error!.message).toMatch(message);
    }
    expect(backend.getCollection).not.toHaveBeenCalled();
    expect(backend.createCollection).not.toHaveBeenCalled();
    expect(backend.search).not.toHaveBeenCalled();
  });

  it('turns service failures into isError results that say what to do next', async () => {
    backend.getCollection.mockRejectedValueOnce(AppError.notFound('collection', 'col_9'));
    expect((await call('service_get_collection', { collection_id: 'col_9' })).content).toEqual([
      { type: 'text', text: expect.stringMatching(/^NOT_FOUND: collection col_9 not found\. Check the id: service_list_collections/) },
    ]);

    backend.deleteFile.mockRejectedValueOnce(AppError.forbidden('This needs the editor role on collection col_1; you are viewer'));
    const forbidden = await call('service_delete_file_from_collection', { collection_id: 'col_1', file_id: 'fle_1' });
    expect(forbidden.isError).toBe(true);
    expect((forbidden.content[0] as { text: string }).text).toMatch(/^FORBIDDEN: This needs the editor role.*ask its owner/);

    backend.createCollection.mockRejectedValueOnce(AppError.validation([{ field: 'name', reason: 'must be 1 to 200 characters' }]));
    expect(((await call('service_create_collection', { name: 'n' })).content[0] as { text: string }).text).toBe(
      'VALIDATION_FAILED: Request validation failed (name: must be 1 to 200 characters). Correct the arguments and call again.',
    );

    backend.search.mockRejectedValueOnce(new AppError(ErrorCode.UNAVAILABLE, 'Index unreachable', { retryable: true }));
    expect(((await call('service_search_collection', { collection_id: 'col_1', query: 'q', offset: 0 })).content[0] as { text: string }).text).toBe(
      'UNAVAILABLE: Index unreachable. This is temporary: retry in a moment.',
    );
    expect(unexpected).not.toHaveBeenCalled();
  });

  it('says nothing internal about a bug, and reports it', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'secret')");
    backend.listCollections.mockRejectedValueOnce(bug);
    const result = await call('service_list_collections');
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^INTERNAL: /);
    expect(JSON.stringify(result)).not.toContain('secret');
    expect(unexpected).toHaveBeenCalledWith(bug, 'service_list_collections');
  });
});

describe('the tool request shortcut of the remote transport', () => {
  /** What the SDK Server answers to a raw request, through a transport that records what it sends. */
  async function throughSdk(backend: CollectionsBackend, request: JSONRPCRequest): Promise<JSONRPCMessage> {
    const server = createMcpServer({ backend: () => backend });
    const sent: JSONRPCMessage[] = [];
    const transport = { start: async () => undefined, close: async () => undefined, send: async (m: JSONRPCMessage) => void sent.push(m) } as {
      start(): Promise<void>;
      close(): Promise<void>;
      send(m: JSONRPCMessage): Promise<void>;
      onmessage?: (m: JSONRPCMessage, extra?: unknown) => void;
    };
    await server.connect(transport);
    transport.onmessage!(request, {});
    while (sent.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await server.close();
    return sent[0];
  }

  const requests: [string, JSONRPCRequest][] = [
    ['tools/list', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
    ['a call', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'service_get_collection', arguments: { collection_id: 'col_1' } } }],
    ['a failing call', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'service_get_collection', arguments: { collection_id: 'col_gone' } } }],
    ['bad arguments', { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'service_get_collection', arguments: { collection_id: 7 } } }],
    ['an unknown tool', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'nope' } }],
  ];

  it.each(requests)('answers %s exactly as the SDK Server does', async (_, request) => {
    const backend = () =>
      fakeBackend({ getCollection: jest.fn(async (id: string) => (id === 'col_1' ? collection : Promise.reject(AppError.notFound('collection', id)))) });
    const direct = await toolRequestShortcut({ backend })(request, {});
    const viaSdk = await throughSdk(backend(), request);
    if ('error' in viaSdk) {
      // The SDK words schema failures its own way; the code is what clients act on.
      expect(direct).toMatchObject({ jsonrpc: '2.0', id: request.id, error: { code: (viaSdk.error as { code: number }).code } });
    } else {
      expect(direct).toEqual(viaSdk);
    }
  });

  it('answers a tools/call without a tool name with InvalidParams (the SDK Server says InternalError)', async () => {
    const request: JSONRPCRequest = { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { arguments: {} } };
    expect(await toolRequestShortcut({ backend: () => fakeBackend() })(request, {})).toMatchObject({ id: 6, error: { code: RpcErrorCode.InvalidParams } });
  });

  it('leaves everything else to the SDK Server', () => {
    const shortcut = toolRequestShortcut({ backend: () => fakeBackend() });
    expect(shortcut({ jsonrpc: '2.0', id: 1, method: 'ping' }, {})).toBeUndefined();
    expect(shortcut({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, {})).toBeUndefined();
    expect(
      shortcut({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'service_list_collections', _meta: { progressToken: 1 } } }, {}),
    ).toBeUndefined();
  });
});
