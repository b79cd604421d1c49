import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResult, ErrorCode as RpcErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AppError, ErrorCode } from '../common/app-error';
import type { CollectionsBackend } from './collections-backend.port';
import { createMcpServer, ServiceMcpServer } from './mcp-server.factory';

const collection = {
  id: 'col_1',
  name: 'Notes',
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:00:00.000Z',
  role: 'owner',
};
const file = {
  id: 'fle_1',
  name: 'a.pdf',
  type: 'application/pdf',
  size: 10,
  status: 'indexed' as const,
  createdAt: '2025-01-01T00:00:00.000Z',
};
const hit = (n: number) => ({
  id: `psg_${n}`,
  content: `passage ${n}`,
  distance: n / 100,
  fileId: 'fle_1',
  fileName: 'a.pdf',
  chunkIndex: n,
});

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
  let server: ServiceMcpServer;

  beforeEach(async () => {
    backend = fakeBackend();
    unexpected = jest.fn();
    server = createMcpServer({ backend: () => backend, onUnexpectedError: unexpected });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'spec', version: '1.0.0' });
    await Promise.all([server.mcp.connect(serverSide), client.connect(clientSide)]);
  });
  afterEach(() => client.close());

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
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
    expect(list.inputSchema).toEqual({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
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
    expect((await call('service_list_collection_files', { collection_id: 'col_1', offset: 200 })).structuredContent).toMatchObject({
      nextOffset: null,
    });
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
    expect((await call('service_list_collection_files', { collection_id: 'col_1' })).structuredContent).toMatchObject({
      offset: 0,
      nextOffset: null,
    });
  });

  // MCP 2025-11-25, server/tools "Error Handling": input validation errors are Tool Execution Errors
  // (isError, so the model can correct itself); an unknown tool is a protocol error (-32602).
  it('answers malformed arguments with an isError result naming each bad argument, before calling the backend', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['service_get_collection', {}, /\(collection_id: is required\)/],
      ['service_list_collection_files', { collection_id: 'col_1', offset: 'third' }, /offset: offset must be an integer number/],
      ['service_list_collection_files', { collection_id: 'col_1', offset: 2.5 }, /offset: offset must be an integer number/],
      ['service_create_collection', { name: 'x', extra: 1 }, /extra: property extra should not exist/],
      ['service_add_file_to_collection', { collection_id: 'col_1', name: 'a.pdf', url: 'nope' }, /url: url must be an absolute URL/],
      // The search body's field is `text`; the tool's argument is `query`, and the refusal says so.
      [
        'service_search_collection',
        { collection_id: 'col_1', query: 'q'.repeat(8193) },
        /\(query: query must be shorter than or equal to 8192 characters\)/,
      ],
      ['service_search_collection', { collection_id: 'col_1', text: 'why' }, /query: is required; text: property text should not exist/],
    ];
    for (const [name, args, message] of cases) {
      const result = await call(name, args);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      const text = (result.content[0] as { text: string }).text;
      expect(text).toMatch(/^VALIDATION_FAILED: /);
      expect(text).toMatch(message);
      expect(text).toMatch(/Correct the arguments and call again\.$/);
    }
    expect(backend.getCollection).not.toHaveBeenCalled();
    expect(backend.createCollection).not.toHaveBeenCalled();
    expect(backend.search).not.toHaveBeenCalled();
    expect(unexpected).not.toHaveBeenCalled();
  });

  it('answers a call of an unknown tool with JSON-RPC InvalidParams', async () => {
    const error = await rejection('service_unknown', {});
    expect(error).toBeInstanceOf(McpError);
    expect(error!.code).toBe(RpcErrorCode.InvalidParams);
    expect(error!.message).toMatch(/Unknown tool service_unknown/);
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
    expect(
      ((await call('service_search_collection', { collection_id: 'col_1', query: 'q', offset: 0 })).content[0] as { text: string }).text,
    ).toBe('UNAVAILABLE: Index unreachable. This is temporary: retry in a moment.');
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

describe('workflow tools in a session', () => {
  const tool = (name: string, description = 'Runs a workflow.') => ({
    name,
    title: name,
    description,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
    workflowId: `wfl_${name}`,
  });

  async function connected(backend: CollectionsBackend) {
    const server = createMcpServer({ backend: () => backend });
    await server.syncWorkflowTools({});
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'spec', version: '1.0.0' });
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
    await Promise.all([server.mcp.connect(serverSide), client.connect(clientSide)]);
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
    return { server, client, changes: () => changes, settle };
  }

  it('lists the workflow tools after the collection tools, with their own JSON Schema', async () => {
    const { client } = await connected(fakeBackend({ listWorkflowTools: jest.fn(async () => [tool('ask')]) }));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toHaveLength(9);
    expect(tools[8]).toMatchObject({ name: 'ask', inputSchema: { type: 'object', required: ['q'], additionalProperties: false } });
    await client.close();
  });

  it('tells the client its list changed only when a registration changed', async () => {
    const { server, client, changes, settle } = await connected(fakeBackend({ listWorkflowTools: jest.fn(async () => [tool('ask')]) }));
    server.setWorkflowTools([tool('ask')]);
    await settle();
    expect(changes()).toBe(0);
    server.setWorkflowTools([tool('ask', 'Now says something else.'), tool('other')]);
    await settle();
    expect(changes()).toBe(1);
    expect((await client.listTools()).tools.find((t) => t.name === 'ask')?.description).toBe('Now says something else.');
    server.setWorkflowTools([]);
    await settle();
    expect(changes()).toBe(2);
    expect((await client.listTools()).tools).toHaveLength(8);
    await client.close();
  });

  it('finds a workflow tool published since the session listed, and refuses a removed one as unknown', async () => {
    const listWorkflowTools = jest.fn(async () => [] as ReturnType<typeof tool>[]);
    const callWorkflowTool = jest.fn(async () => ({ runId: 'run_1', status: 'succeeded', output: { a: 1 } }));
    const { client } = await connected(fakeBackend({ listWorkflowTools, callWorkflowTool }));
    listWorkflowTools.mockResolvedValue([tool('late')]);
    const result = (await client.callTool({ name: 'late', arguments: { q: 'x' } })) as CallToolResult;
    expect(result.structuredContent).toEqual({ runId: 'run_1', status: 'succeeded', output: { a: 1 }, error: null });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(result.structuredContent) }]);
    callWorkflowTool.mockResolvedValueOnce({
      runId: 'run_2',
      status: 'failed',
      output: null,
      error: { code: 'NODE_FAILED', message: 'boom' },
    } as never);
    const failed = (await client.callTool({ name: 'late', arguments: { q: 'x' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toEqual({
      runId: 'run_2',
      status: 'failed',
      output: null,
      error: { code: 'NODE_FAILED', message: 'boom' },
    });
    expect(failed.content).toEqual([{ type: 'text', text: JSON.stringify(failed.structuredContent) }]);
    callWorkflowTool.mockRejectedValueOnce(AppError.notFound('workflow tool', 'late'));
    const error = await client.callTool({ name: 'late', arguments: { q: 'x' } }).catch((e: unknown) => e);
    expect((error as McpError).code).toBe(RpcErrorCode.InvalidParams);
    await client.close();
  });
});
