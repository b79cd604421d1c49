import { CallToolResult, Client, InMemoryTransport, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { createRequestStateCodec } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { AppError, ErrorCode } from '../common/app-error';
import type { McpBackend, ToolRunRecord, WorkflowToolRecord } from './mcp-backend.port';
import type { McpEra } from './mcp-call';
import { createMcpServer, ServiceMcpServer } from './mcp-server.factory';
import { TOOL_NAME_RULE } from './tools/tool-listing';
import type { FollowState } from './workflow-calls';

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
const run = (fields: Partial<ToolRunRecord> = {}): ToolRunRecord => ({
  runId: 'run_1',
  workflowId: 'wfl_ask',
  status: 'succeeded',
  cancelRequested: false,
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:00:01.000Z',
  output: { a: 1 },
  error: null,
  progress: { done: 2, node: null },
  approval: null,
  keptForMs: 30 * 86_400_000,
  ...fields,
});
const workflowTool = (name: string, description = 'Runs a workflow.'): WorkflowToolRecord => ({
  name,
  title: name,
  description,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
  workflowId: `wfl_${name}`,
});

function fakeBackend(overrides: Partial<McpBackend> = {}): jest.Mocked<McpBackend> {
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
    getFile: jest.fn(async () => file),
    fileText: jest.fn(async () => ({ name: 'a.pdf', type: 'application/pdf', content: 'All of a.pdf' })),
    getPassage: jest.fn(async (_c: string, _f: string, id: string) => ({
      id,
      fileId: 'fle_1',
      fileName: 'a.pdf',
      index: 0,
      page: 1,
      content: 'passage 0',
    })),
    addFile: jest.fn(async () => ({ ...file, status: 'pending' as const })),
    deleteFile: jest.fn(async () => undefined),
    search: jest.fn(async () => ({ result: [hit(0)] })),
    searchMany: jest.fn(async () => ({ result: [{ ...hit(0), collectionId: 'col_1' }] })),
    listWorkflowTools: jest.fn(async () => []),
    startWorkflowTool: jest.fn(async (name: string) => Promise.reject(AppError.notFound('workflow tool', name))),
    toolRun: jest.fn(async () => run()),
    waitForToolRun: jest.fn(async () => run()),
    cancelToolRun: jest.fn(async () => run({ status: 'canceled' })),
    decideApproval: jest.fn(async () => undefined),
    ...overrides,
  } as jest.Mocked<McpBackend>;
}

const stateCodec = createRequestStateCodec<FollowState>({ key: 'k'.repeat(32) });

/**
 * A client of either era connected in-process to the server, through the SDK's own stdio entry
 * (`serveStdio`, which pins the connection to the era the client opens with) over its in-memory
 * transport: the v2 client opens 2025 sessions by default and 2026-07-28 ones when pinned.
 */
async function connect(era: McpEra, backend: McpBackend, clientOptions: ConstructorParameters<typeof Client>[1] = {}) {
  const unexpected = jest.fn();
  const servers: ServiceMcpServer[] = [];
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const handle = serveStdio(
    ({ era: served }) => {
      const server = createMcpServer(
        { backend: () => backend, onUnexpectedError: unexpected, requestState: stateCodec, toolTimeoutMs: 5000 },
        served,
      );
      servers.push(server);
      return server.server;
    },
    { transport: serverSide },
  );
  const client = new Client(
    { name: 'spec', version: '1.0.0' },
    { ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}), ...clientOptions },
  );
  await client.connect(clientSide);
  expect(client.getProtocolEra()).toBe(era);
  return {
    client,
    unexpected,
    server: () => servers[servers.length - 1],
    close: async () => {
      await client.close();
      await handle.close();
    },
  };
}

describe.each<McpEra>(['legacy', 'modern'])('the MCP server, %s era', (era) => {
  let backend: jest.Mocked<McpBackend>;
  let client: Client;
  let unexpected: jest.Mock;
  let close: () => Promise<void>;

  beforeEach(async () => {
    backend = fakeBackend();
    ({ client, unexpected, close } = await connect(era, backend));
  });
  afterEach(() => close());

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const rejection = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args }).then(
      () => undefined,
      (error: unknown) => error as ProtocolError,
    );

  it('emits strict JSON Schemas, output schemas, titles and icons, under names that follow the naming rule', async () => {
    const { tools } = await client.listTools();
    const search = tools.find((t) => t.name === 'service_search_collection')!;
    expect(search.inputSchema).toEqual({
      type: 'object',
      properties: {
        collection_id: { type: 'string', minLength: 1, maxLength: 200, description: expect.any(String) },
        // The limits of the REST search body (SearchDto), the class that validates both doors.
        query: { type: 'string', minLength: 1, maxLength: 8192, description: expect.any(String) },
        offset: { type: 'number', multipleOf: 1, minimum: 0, maximum: 1000, default: 0, description: expect.any(String) },
        // Optional: the interface's required arguments stay as they are.
        filter: expect.objectContaining({ type: 'object' }),
        // Also optional, as strict as the rest: the REST body's rerank object.
        rerank: expect.objectContaining({ type: 'object', additionalProperties: false, description: expect.any(String) }),
      },
      required: ['collection_id', 'query'],
      additionalProperties: false,
    });
    expect(Object.keys((search.inputSchema.properties!.rerank as { properties: object }).properties)).toEqual([
      'enabled',
      'top_n',
      'url',
      'kind',
      'model',
      'credential_id',
    ]);
    expect(tools.find((t) => t.name === 'service_list_collections')!.inputSchema).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
    for (const tool of tools) {
      expect(tool.name).toMatch(TOOL_NAME_RULE);
      expect(tool.outputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.title).toEqual(expect.any(String));
      expect(tool.icons).toEqual([
        { src: expect.stringMatching(/^data:image\/svg\+xml;base64,/), mimeType: 'image/svg+xml', sizes: ['any'] },
      ]);
    }
  });

  it('returns the result as JSON text and as structuredContent, projected onto the declared fields', async () => {
    backend.getCollection.mockResolvedValueOnce({ ...collection, ownerId: 'usr_secret' } as never);
    const result = await call('service_get_collection', { collection_id: 'col_1' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(collection);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(collection) }]);
  });

  it('lists at most 100 files from offset, says where the next page starts, and links the indexed ones', async () => {
    backend.listFiles.mockResolvedValueOnce({ items: Array.from({ length: 100 }, (_, i) => ({ ...file, id: `fle_${i}` })), total: 250 });
    const first = await call('service_list_collection_files', { collection_id: 'col_1', offset: 100 });
    expect(backend.listFiles).toHaveBeenCalledWith('col_1', { offset: 100, limit: 100 });
    expect(first.structuredContent).toMatchObject({ total: 250, offset: 100, nextOffset: 200 });
    expect(first.content).toHaveLength(101);
    expect(first.content[1]).toEqual({
      type: 'resource_link',
      uri: 'collections://col_1/files/fle_0',
      name: 'a.pdf',
      title: 'a.pdf',
      mimeType: 'text/plain',
    });
    backend.listFiles.mockResolvedValueOnce({ items: [file], total: 201 });
    expect((await call('service_list_collection_files', { collection_id: 'col_1', offset: 200 })).structuredContent).toMatchObject({
      nextOffset: null,
    });
  });

  it('searches for ten results from offset; each hit links its passage, and each file once', async () => {
    backend.search.mockResolvedValueOnce({ result: Array.from({ length: 10 }, (_, i) => hit(i)) });
    const result = await call('service_search_collection', { collection_id: 'col_1', query: 'why', offset: 20 });
    expect(backend.search).toHaveBeenCalledWith('col_1', { text: 'why', topK: 10, offset: 20 });
    expect(result.structuredContent).toMatchObject({ offset: 20, nextOffset: 30 });
    expect((result.structuredContent as { result: unknown[] }).result).toHaveLength(10);
    expect(result.content[0]).toEqual({ type: 'text', text: JSON.stringify(result.structuredContent) });
    const links = result.content.slice(1) as { uri: string }[];
    expect(links.map((l) => l.uri)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `collections://col_1/files/fle_1/passages/psg_${i}`),
      'collections://col_1/files/fle_1',
    ]);
    // Every link opens.
    for (const link of links)
      expect((await client.readResource({ uri: link.uri })).contents[0]).toMatchObject({ uri: link.uri, text: expect.any(String) });
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

  it('answers a call of an unknown tool with JSON-RPC InvalidParams, its text saying so once', async () => {
    const error = await rejection('service_unknown', {});
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error!.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(error!.message).toBe('Unknown tool service_unknown: tools/list names the tools of this server');
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

  it('pages tools/list with a cursor: the collection tools first, then the workflow tools', async () => {
    backend.listWorkflowTools.mockResolvedValue(Array.from({ length: 150 }, (_, i) => workflowTool(`tool_${String(i).padStart(3, '0')}`)));
    const first = await client.request({ method: 'tools/list', params: {} });
    expect(first.tools).toHaveLength(100);
    expect(first.tools.slice(0, 9).every((t) => t.name.startsWith('service_'))).toBe(true);
    const second = await client.request({ method: 'tools/list', params: { cursor: first.nextCursor! } });
    expect(second.tools.map((t) => t.name)).toEqual(Array.from({ length: 59 }, (_, i) => `tool_${String(i + 91).padStart(3, '0')}`));
    expect(second.nextCursor).toBeUndefined();
    await expect(client.request({ method: 'tools/list', params: { cursor: 'made-up' } })).rejects.toMatchObject({
      code: ProtocolErrorCode.InvalidParams,
    });
    // The SDK client's own helper follows the cursors to the end.
    expect((await client.listTools()).tools).toHaveLength(159);
  });

  it('serves collections and files as resources, a page at a time, and reads each', async () => {
    backend.listCollections.mockResolvedValue({ items: [collection, { ...collection, id: 'col_2', name: 'More' }], total: 2 });
    backend.listFiles.mockImplementation(async (collectionId, page) => {
      const all = Array.from({ length: collectionId === 'col_1' ? 120 : 3 }, (_, i) => ({ ...file, id: `fle_${collectionId}_${i}` }));
      return { items: all.slice(page.offset, page.offset + page.limit), total: all.length };
    });
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.request({ method: 'resources/list', params: cursor ? { cursor } : {} });
      expect(page.resources.length).toBeLessThanOrEqual(100);
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor);
    expect(uris).toHaveLength(2 + 120 + 3);
    expect(new Set(uris).size).toBe(uris.length);
    expect(uris[0]).toBe('collections://col_1');
    expect(uris[121]).toBe('collections://col_2');
    expect(backend.listFiles).toHaveBeenCalledWith('col_1', expect.objectContaining({ status: 'indexed' }));
    const read = await client.readResource({ uri: 'collections://col_1' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: 'col_1', passages: 3 });
    expect((await client.readResource({ uri: 'collections://col_1/files/fle_1' })).contents[0]).toMatchObject({
      mimeType: 'text/plain',
      text: 'All of a.pdf',
    });
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toContain(
      'collections://{collection_id}/files/{file_id}/passages/{passage_id}',
    );
  });

  it('reads what the caller may not see, or no such thing, as a missing resource', async () => {
    backend.getCollection.mockRejectedValueOnce(AppError.notFound('collection', 'col_x'));
    await expect(client.readResource({ uri: 'collections://col_x' })).rejects.toMatchObject({ code: ProtocolErrorCode.InvalidParams });
    await expect(client.readResource({ uri: 'https://example.com/' })).rejects.toMatchObject({ code: ProtocolErrorCode.InvalidParams });
    backend.fileText.mockRejectedValueOnce(AppError.conflict('file fle_1 has no extracted text: its status is pending'));
    await expect(client.readResource({ uri: 'collections://col_1/files/fle_1' })).rejects.toMatchObject({
      message: expect.stringContaining('CONFLICT: file fle_1 has no extracted text'),
    });
  });

  it('answers with citations: the passages found come embedded under the URIs to cite', async () => {
    backend.search.mockResolvedValueOnce({ result: [hit(0), hit(1)] });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['answer_with_citations', 'summarize_file']);
    const prompt = await client.getPrompt({ name: 'answer_with_citations', arguments: { collection_id: 'col_1', question: 'Why?' } });
    expect(backend.search).toHaveBeenCalledWith('col_1', { text: 'Why?', topK: 10, offset: 0 });
    expect(prompt.messages[0].content).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/cite the passage.*\n\nQuestion: Why\?$/s),
    });
    expect(prompt.messages.slice(1).map((m) => m.content)).toEqual([
      { type: 'resource', resource: { uri: 'collections://col_1/files/fle_1/passages/psg_0', mimeType: 'text/plain', text: 'passage 0' } },
      { type: 'resource', resource: { uri: 'collections://col_1/files/fle_1/passages/psg_1', mimeType: 'text/plain', text: 'passage 1' } },
    ]);
    await expect(client.getPrompt({ name: 'answer_with_citations', arguments: { collection_id: 'col_1' } })).rejects.toMatchObject({
      code: ProtocolErrorCode.InvalidParams,
    });
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'answer_with_citations' },
      argument: { name: 'collection_id', value: 'No' },
    });
    expect(completion.completion.values).toEqual(['col_1']);
  });
});

describe.each<McpEra>(['legacy', 'modern'])('workflow tools, %s era', (era) => {
  it('lists the workflow tools after the collection tools, with their own JSON Schema and the output schema of a run', async () => {
    const { client, close } = await connect(era, fakeBackend({ listWorkflowTools: jest.fn(async () => [workflowTool('ask')]) }));
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(10);
    expect(tools[9]).toMatchObject({
      name: 'ask',
      inputSchema: { type: 'object', required: ['q'], additionalProperties: false },
      outputSchema: { type: 'object', required: ['runId', 'status', 'output', 'error'] },
    });
    // 2025-11-25 says per tool that it may run as a task; 2026-07-28 says it with the extension.
    expect(tools[9].execution).toEqual(era === 'legacy' ? { taskSupport: 'optional' } : undefined);
    await close();
  });

  it("answers with the run's output and a link to the run; a failure is an isError result; a removed tool is unknown", async () => {
    const backend = fakeBackend({ listWorkflowTools: jest.fn(async () => [workflowTool('ask')]) });
    backend.startWorkflowTool.mockResolvedValueOnce(run({ status: 'queued', output: null }));
    const { client, close } = await connect(era, backend);
    const result = (await client.callTool({ name: 'ask', arguments: { q: 'x' } })) as CallToolResult;
    expect(backend.startWorkflowTool).toHaveBeenCalledWith('ask', { q: 'x' });
    expect(result.structuredContent).toEqual({ runId: 'run_1', status: 'succeeded', output: { a: 1 }, error: null });
    expect(result.content).toEqual([
      { type: 'text', text: JSON.stringify(result.structuredContent) },
      expect.objectContaining({ type: 'resource_link', uri: 'runs://run_1' }),
    ]);
    backend.startWorkflowTool.mockResolvedValueOnce(run({ runId: 'run_2', status: 'queued', output: null }));
    backend.waitForToolRun.mockResolvedValueOnce(
      run({ runId: 'run_2', status: 'failed', output: null, error: { code: 'NODE_FAILED', message: 'boom' } }),
    );
    const failed = (await client.callTool({ name: 'ask', arguments: { q: 'x' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toEqual({
      runId: 'run_2',
      status: 'failed',
      output: null,
      error: { code: 'NODE_FAILED', message: 'boom' },
    });
    backend.startWorkflowTool.mockRejectedValueOnce(AppError.notFound('workflow tool', 'ask'));
    await expect(client.callTool({ name: 'ask', arguments: { q: 'x' } })).rejects.toMatchObject({ code: ProtocolErrorCode.InvalidParams });
    await close();
  });

  it('reports progress as the run moves when the client sent a progress token', async () => {
    const backend = fakeBackend({ listWorkflowTools: jest.fn(async () => [workflowTool('ask')]) });
    backend.startWorkflowTool.mockResolvedValueOnce(run({ status: 'queued', output: null, progress: { done: 0, node: null } }));
    backend.waitForToolRun
      .mockResolvedValueOnce(run({ status: 'running', output: null, progress: { done: 1, node: 'fetch' } }))
      .mockResolvedValueOnce(run({ progress: { done: 3, node: null } }));
    const { client, close } = await connect(era, backend);
    const progress: { progress: number; message?: string }[] = [];
    await client.callTool({ name: 'ask', arguments: { q: 'x' } }, { onprogress: (p) => void progress.push(p) });
    expect(progress.map((p) => p.progress)).toEqual([0, 1, 3]);
    expect(progress[1].message).toBe('Running node "fetch" (1 step done)');
    await close();
  });

  it('asks for missing arguments with a form, and runs with what the user filled in', async () => {
    const backend = fakeBackend({ listWorkflowTools: jest.fn(async () => [workflowTool('ask')]) });
    backend.startWorkflowTool
      .mockRejectedValueOnce(
        AppError.validation([{ field: 'q', reason: 'is required' }], 'The arguments of ask do not match its input schema'),
      )
      .mockResolvedValueOnce(run());
    const { client, close } = await connect(era, backend, { capabilities: { elicitation: { form: {} } } });
    const asked: unknown[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { q: 'typed' } };
    });
    const result = (await client.callTool({ name: 'ask', arguments: {} })) as CallToolResult;
    expect(asked).toEqual([
      expect.objectContaining({
        message: 'ask needs: q is required',
        requestedSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      }),
    ]);
    expect(backend.startWorkflowTool).toHaveBeenLastCalledWith('ask', { q: 'typed' });
    expect(result.structuredContent).toMatchObject({ status: 'succeeded' });
    await close();
  });
});
