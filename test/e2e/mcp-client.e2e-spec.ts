import { startTestApp, TestApp } from '../utils/test-app';
import { TestMcpServer } from '../utils/test-mcp-server';
import { waitForRun } from '../utils/workflows-fixtures';

/**
 * The mcp-client node over real HTTP: an outside MCP server (the SDK's server, Streamable HTTP) on
 * 127.0.0.1, which the operator allowed (FETCH_ALLOWED_HOSTS), behind a bearer token the node
 * injects from a credential.
 */
describe('mcp-client node', () => {
  const TOKEN = 'mcp-outside-secret-token-0123';
  let t: TestApp;
  let server: TestMcpServer;
  let credentialId: string;

  beforeAll(async () => {
    server = await TestMcpServer.start({ token: TOKEN });
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    const created = await t.request('POST', '/api/v1/credentials', {
      body: { name: 'outside MCP', type: 'bearer', secrets: { token: TOKEN } },
    });
    expect(created.status).toBe(201);
    credentialId = created.body.id;
  });

  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  const run = async (node: Record<string, unknown>, extra: { nodes?: unknown[]; edges?: unknown[] } = {}) => {
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'call', type: 'mcp-client', ...node },
        ...(extra.nodes ?? []),
      ],
      edges: [{ from: 'trigger', to: 'call' }, ...(extra.edges ?? [])],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'call an outside tool', definition } });
    expect(created.status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, {
      body: { runType: 'test', input: { a: 2, b: 3 } },
    });
    expect(started.status).toBe(202);
    return waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
  };
  const step = (record: any, nodeId: string) => record.steps.find((s: any) => s.nodeId === nodeId);

  it("lists the server's tools in the tool dropdown, through the credential", async () => {
    const parameters = encodeURIComponent(JSON.stringify({ url: server.url, credential: credentialId }));
    const listed = await t.request('GET', `/api/v1/node-types/mcp-client/1/parameters/tool/options?parameters=${parameters}`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((o: any) => o.value).sort()).toEqual(['add', 'echo', 'fail', 'whoami']);
    expect(listed.body.items.find((o: any) => o.value === 'add')).toEqual({ value: 'add', label: 'add', description: 'Adds two numbers' });
    expect(server.requests.every((r) => r.method !== 'POST' || r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);

    const noUrl = await t.request('GET', '/api/v1/node-types/mcp-client/1/parameters/tool/options');
    expect(noUrl.body).toEqual({ items: [] });
    const notJson = await t.request('GET', '/api/v1/node-types/mcp-client/1/parameters/tool/options?parameters=nope');
    expect(notJson.status).toBe(400);
    expect(JSON.stringify(notJson.body)).toContain('parameters');
    // The outbound guard applies to the dropdown as to runs: a private address the operator did not allow is refused.
    const guarded = encodeURIComponent(JSON.stringify({ url: 'http://10.0.0.7/mcp' }));
    const refused = await t.request('GET', `/api/v1/node-types/mcp-client/1/parameters/tool/options?parameters=${guarded}`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('FETCH_ALLOWED_HOSTS');
  });

  it('calls the tool with arguments from an expression and outputs its structured content', async () => {
    const record = await run({
      parameters: { url: server.url, credential: credentialId, tool: 'add', arguments: '{a: input.a, b: input.b}' },
      parameterMode: { arguments: 'expression' },
    });
    expect(record.status).toBe('succeeded');
    expect(step(record, 'call').output).toEqual({ sum: 5 });
    expect(server.calls).toContainEqual({ name: 'add', args: { a: 2, b: 3 } });
  });

  it('outputs the text of a tool without structured content, the credential masked in the record', async () => {
    const record = await run({ parameters: { url: server.url, credential: credentialId, tool: 'whoami', arguments: {} } });
    expect(record.status).toBe('succeeded');
    expect(step(record, 'call').output).toEqual({ text: expect.stringMatching(/^authorization: (Bearer )?\[REDACTED\]$/) });
    expect(JSON.stringify(record)).not.toContain(TOKEN);
  });

  it('refuses arguments the tool schema refuses, naming the field, without calling the tool', async () => {
    const before = server.calls.length;
    const record = await run({ parameters: { url: server.url, credential: credentialId, tool: 'add', arguments: { a: 'two', b: 3 } } });
    expect(record.status).toBe('failed');
    expect(step(record, 'call').error).toMatchObject({
      code: 'NODE_CONFIGURATION',
      message: expect.stringContaining('Arguments of tool add: a must be number'),
    });
    expect(server.calls.length).toBe(before);
  });

  it('fails the node on an isError answer, and the error output takes it', async () => {
    const record = await run(
      { onError: 'errorOutput', parameters: { url: server.url, credential: credentialId, tool: 'fail', arguments: { why: 'no stock' } } },
      {
        nodes: [{ id: 'handled', type: 'set', parameters: { fields: { handled: true } } }],
        edges: [{ from: 'call', to: 'handled', output: 'error' }],
      },
    );
    expect(record.status).toBe('succeeded');
    expect(step(record, 'call')).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('Tool fail failed: failed on purpose: no stock') },
    });
    expect(step(record, 'handled').status).toBe('succeeded');
  });

  it('fails without the credential: the server refuses', async () => {
    const record = await run({ parameters: { url: server.url, tool: 'add', arguments: { a: 1, b: 1 } } });
    expect(record.status).toBe('failed');
    expect(step(record, 'call').error.message).toMatch(/MCP server/);
  });
});
