import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResult, ErrorCode as RpcErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { ensureStdioBuild, modernRpc, rawMcp, STDIO_ENTRY } from './mcp.helpers';

type Kind = 'Streamable HTTP' | 'SSE' | 'stdio';

/** An MCP trigger that asks for a question, and a Respond node that answers with it, tagged. */
const toolWorkflow = (toolName?: string) => ({
  nodes: [
    {
      id: 'ask',
      type: 'mcp-trigger',
      parameters: {
        ...(toolName ? { toolName } : {}),
        description: 'Echoes the question back, tagged: a stand-in for a real lookup.',
        inputSchema: {
          type: 'object',
          properties: { question: { type: 'string', minLength: 1 } },
          required: ['question'],
          additionalProperties: false,
        },
      },
    },
    { id: 'answer', type: 'respond', parameters: {} },
  ],
  edges: [{ from: 'ask', to: 'answer' }],
});

describe('workflows as MCP tools', () => {
  let t: TestApp;
  let owner: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;
  let workflowId: string;
  const clients: Client[] = [];

  const connect = async (kind: Kind, key: string): Promise<Client> => {
    const headers = { authorization: `Bearer ${key}` };
    const transport: Transport =
      kind === 'Streamable HTTP'
        ? new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers } })
        : kind === 'SSE'
          ? new SSEClientTransport(new URL('/sse', t.url), { requestInit: { headers } })
          : new StdioClientTransport({
              command: process.execPath,
              args: [STDIO_ENTRY],
              env: { PATH: process.env.PATH ?? '', SERVICE_URL: t.url, SERVICE_API_KEY: key },
              stderr: 'pipe',
            });
    const client = new Client({ name: 'workflow-tools-e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  const publish = async (key: string, name: string, definition: unknown) => {
    const created = await t.request('POST', '/api/v1/workflows', { key, body: { name, definition } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`, { key })).status).toBe(201);
    return created.body.id as string;
  };

  beforeAll(async () => {
    ensureStdioBuild();
    t = await startTestApp({ MCP_TOOL_TIMEOUT_MS: '20000' });
    [owner, viewer, stranger] = await Promise.all([t.createUser('tool-owner'), t.createUser('tool-viewer'), t.createUser('tool-stranger')]);
    workflowId = await publish(owner.key, 'Answer a Question', toolWorkflow());
    const shared = await t.request('PUT', `/api/v1/workflows/${workflowId}/members/${viewer.id}`, {
      key: owner.key,
      body: { role: 'viewer' },
    });
    expect(shared.status).toBeLessThan(300);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await t?.close();
  });

  describe.each<Kind>(['Streamable HTTP', 'SSE', 'stdio'])('over %s', (kind) => {
    it('lists a published workflow with an MCP trigger, named from the workflow, and calls it', async () => {
      const client = await connect(kind, viewer.key);
      const { tools } = await client.listTools();
      const tool = tools.find((candidate) => candidate.name === 'answer_a_question');
      expect(tool).toMatchObject({
        title: 'Answer a Question',
        description: 'Echoes the question back, tagged: a stand-in for a real lookup.',
        inputSchema: { type: 'object', required: ['question'] },
      });
      expect(tools.filter((candidate) => candidate.name.startsWith('service_'))).toHaveLength(9);

      const result = (await client.callTool({ name: 'answer_a_question', arguments: { question: 'why?' } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { question: 'why?' }, error: null });
      // The text block holds the same thing as structuredContent; a link to the run follows it, which resources/read opens.
      const runId = (result.structuredContent as { runId: string }).runId;
      expect(result.content).toEqual([
        { type: 'text', text: JSON.stringify(result.structuredContent) },
        expect.objectContaining({ type: 'resource_link', uri: `runs://${runId}`, mimeType: 'application/json' }),
      ]);
      const read = await client.readResource({ uri: `runs://${runId}` });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
        runId,
        status: 'succeeded',
        output: { question: 'why?' },
      });
      const run = await t.request('GET', `/api/v1/runs/${runId}`, { key: owner.key });
      expect(run.body).toMatchObject({ runType: 'production', actingUserId: viewer.id, input: { question: 'why?' } });
    });

    // MCP 2025-11-25, server/tools "Error Handling": input validation errors are Tool Execution Errors.
    it('refuses arguments its input schema refuses with an isError result naming them, and starts no run', async () => {
      const client = await connect(kind, owner.key);
      const before = (await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`, { key: owner.key })).body.total;
      const result = (await client.callTool({ name: 'answer_a_question', arguments: { question: '' } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect((result.content[0] as { text: string }).text).toMatch(/^VALIDATION_FAILED: .*question/);
      expect((await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`, { key: owner.key })).body.total).toBe(before);
    });

    it('is neither listed nor callable for a user without a role on the workflow', async () => {
      const client = await connect(kind, stranger.key);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).not.toContain('answer_a_question');
      const error = await client.callTool({ name: 'answer_a_question', arguments: { question: 'sneaky' } }).catch((e: unknown) => e);
      expect((error as McpError).code).toBe(RpcErrorCode.InvalidParams);
      expect((error as McpError).message).toMatch(/Unknown tool/);
    });
  });

  it.each<Kind>(['Streamable HTTP', 'SSE'])('tells connected %s clients when a workflow tool is published or removed', async (kind) => {
    const client = await connect(kind, owner.key);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    // The Streamable HTTP client opens its stream for server messages after initialize: let it settle.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await publish(owner.key, `Second tool ${kind}`, toolWorkflow(`second_${kind === 'SSE' ? 'sse' : 'http'}`));
    const deadline = Date.now() + 10_000;
    while (changes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(changes).toBeGreaterThan(0);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(`second_${kind === 'SSE' ? 'sse' : 'http'}`);

    changes = 0;
    expect((await t.request('DELETE', `/api/v1/workflows/${second}`, { key: owner.key })).status).toBe(204);
    while (changes === 0 && Date.now() < deadline + 10_000) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(changes).toBeGreaterThan(0);
  });

  it('tells a session nothing of a workflow tool its user cannot see', async () => {
    const [mine, theirs] = await Promise.all([connect('Streamable HTTP', owner.key), connect('SSE', stranger.key)]);
    const changes = { mine: 0, theirs: 0 };
    mine.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes.mine++);
    theirs.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes.theirs++);
    // The Streamable HTTP client opens its stream for server messages after initialize: let it settle.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ownersTool = await publish(owner.key, 'Owner only', toolWorkflow('owner_only'));
    while (changes.mine === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    // Then one the stranger sees: its notification comes after any the owner's publish could have caused.
    const strangersTool = await publish(stranger.key, 'Stranger own', toolWorkflow('stranger_own'));
    while (changes.theirs === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await theirs.listTools()).tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['stranger_own']));
    expect((await theirs.listTools()).tools.map((tool) => tool.name)).not.toContain('owner_only');
    expect(changes.theirs).toBe(1);
    for (const [key, id] of [
      [owner.key, ownersTool],
      [stranger.key, strangersTool],
    ])
      await t.request('DELETE', `/api/v1/workflows/${id}`, { key });
  });

  // The HTTP door answers such a call without the SDK's per-request machinery (its speed against REST, docs/mcp.md "Speed").
  it('answers a plain call from a client that can be asked nothing in one JSON response, the result the SDK gives a client that can', async () => {
    const call = { name: 'answer_a_question', arguments: { question: 'plain?' } };
    const sameRun = (result: { structuredContent: { runId: string } }) =>
      JSON.parse(JSON.stringify(result).replaceAll(result.structuredContent.runId, 'run_x'));
    const legacyCall = async (capabilities: Record<string, unknown>) => {
      const opened = await rawMcp(
        t.url,
        'POST',
        { authorization: `Bearer ${viewer.key}` },
        JSON.stringify({ ...JSON.parse(rawMcp.initializeBody), params: { ...JSON.parse(rawMcp.initializeBody).params, capabilities } }),
      );
      const session = { authorization: `Bearer ${viewer.key}`, 'mcp-session-id': opened.headers.get('mcp-session-id')! };
      expect((await rawMcp(t.url, 'POST', session, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status).toBe(
        202,
      );
      const answer = await rawMcp(t.url, 'POST', session, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: call }));
      await rawMcp(t.url, 'DELETE', session);
      expect(answer.status).toBe(200);
      return answer;
    };
    const plain = await legacyCall({});
    const askable = await legacyCall({ elicitation: {} });
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect(plain.headers.get('mcp-session-id')).toBeTruthy();
    expect(plain.body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { structuredContent: { status: 'succeeded', output: { question: 'plain?' } } },
    });
    expect(sameRun(plain.body.result)).toEqual(sameRun(askable.body.result));

    const modernPlain = await modernRpc(t.url, viewer.key, 'tools/call', call);
    const modernAskable = await modernRpc(t.url, viewer.key, 'tools/call', call, { capabilities: { elicitation: {} } });
    expect(modernPlain.messages).toHaveLength(1);
    expect(modernPlain.message.result).toMatchObject({ resultType: 'complete', structuredContent: { status: 'succeeded' } });
    expect(sameRun(modernPlain.message.result)).toEqual(sameRun(modernAskable.message.result));

    // An envelope without the client's capabilities is the SDK's to judge, never a server error.
    const undeclared = await modernRpc(t.url, viewer.key, 'tools/call', call, { capabilities: null });
    expect(undeclared.status).toBeLessThan(500);
    expect(undeclared.message.error?.code ?? 0).not.toBe(-32603);
  });

  it('answers a failed run as an isError result naming the run and its error', async () => {
    const failing = await publish(owner.key, 'Always Fails', {
      nodes: [
        { id: 'ask', type: 'mcp-trigger', parameters: { toolName: 'always_fails' } },
        { id: 'boom', type: 'http-request', parameters: { method: 'GET', url: 'http://10.255.255.1/blocked' } },
      ],
      edges: [{ from: 'ask', to: 'boom' }],
    });
    const client = await connect('Streamable HTTP', owner.key);
    const result = (await client.callTool({ name: 'always_fails', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      runId: expect.stringMatching(/^run_/),
      status: 'failed',
      error: { code: expect.any(String), message: expect.any(String) },
    });
    expect(result.content[0]).toEqual({ type: 'text', text: JSON.stringify(result.structuredContent) });
    await t.request('DELETE', `/api/v1/workflows/${failing}`, { key: owner.key });
  });

  it('refuses a call through a process whose list is older than the active version, and lists afresh after it', async () => {
    // A second process on the same data: its tool list is cached there, unaware of what the first publishes.
    const other = await startTestApp({ DATA_DIR: t.dataDir, MCP_TOOL_TIMEOUT_MS: '20000' });
    try {
      const id = await publish(owner.key, 'Soon No Tool', toolWorkflow('soon_no_tool'));
      const listed = await other.request('GET', '/api/v1/workflow-tools', { key: owner.key });
      expect(listed.body.items.map((tool: { name: string }) => tool.name)).toContain('soon_no_tool');

      // Republished through the first process as a plain webhook workflow: no tool any more.
      const webhookOnly = { nodes: [{ id: 'hook', type: 'webhook-trigger', parameters: {} }], edges: [] };
      expect((await t.request('PUT', `/api/v1/workflows/${id}`, { key: owner.key, body: { definition: webhookOnly } })).status).toBe(200);
      expect((await t.request('POST', `/api/v1/workflows/${id}/publish`, { key: owner.key })).status).toBe(201);

      const call = await other.request('POST', '/api/v1/workflow-tools/soon_no_tool/calls', {
        key: owner.key,
        body: { question: 'still there?' },
      });
      expect(call.status).toBe(409);
      expect(call.body.message).toContain('list the tools again');
      expect((await t.request('GET', `/api/v1/runs?workflowId=${id}`, { key: owner.key })).body.total).toBe(0);
      const relisted = await other.request('GET', '/api/v1/workflow-tools', { key: owner.key });
      expect(relisted.body.items.map((tool: { name: string }) => tool.name)).not.toContain('soon_no_tool');
    } finally {
      await other.app.close();
    }
  });
});
