import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { stallDuring } from '../utils/health-probe';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { TestMcpServer } from '../utils/test-mcp-server';
import { waitForRun } from '../utils/workflows-fixtures';

/**
 * Nothing a user writes may freeze the service: each attack of the report, tried through its
 * public door while `/health` is asked every 50 ms. The worst stall stays under 250 ms beyond the
 * stall of a quiet second measured just before (with a backtracking engine, the 29-character
 * pattern held the thread 3.7 s through REST, 17 s through the approval page).
 */
describe('nothing a user writes freezes the event loop', () => {
  const STALL_MS = 250;
  const CATASTROPHIC = '^(a+)+$';
  const EVIL = 'a'.repeat(29) + '!';
  let t: TestApp;
  let viewer: TestUser;
  let outside: TestMcpServer;

  beforeAll(async () => {
    outside = await TestMcpServer.start({ patternTool: true });
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    viewer = await t.createUser('viewer');
  });
  afterAll(async () => {
    await t?.close();
    await outside?.close();
  });

  /**
   * A frozen event loop stalls the probe on every try; a machine at load 20 on 2 cores can stall it
   * once on its own (the attack's sandbox threads take the cores the service's thread waits for).
   * So an attack is tried up to three times, and one try within the limit shows the loop was free.
   */
  const expectNoStall = async (attack: () => Promise<void>) => {
    const tries: { stall: number; baseline: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const measured = await stallDuring(t.url, attack);
      tries.push(measured);
      if (measured.stall < measured.baseline + STALL_MS) return;
    }
    const beyond = tries.map(({ stall, baseline }) => Math.round(stall - baseline));
    throw new Error(`/health stalled on every try: ${beyond.join(', ')} ms beyond the quiet baseline (limit ${STALL_MS} ms)`);
  };

  const publish = async (name: string, definition: object) => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name, definition } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };

  /** A run waiting at an approval whose field must match `pattern`; its run id and link path. */
  const waitingApproval = async (pattern: string) => {
    const fields = { type: 'object', properties: { code: { type: 'string', pattern } } };
    const workflowId = await publish(`approval ${pattern}`, {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'ask', type: 'approval', parameters: { summary: 'Go?', fields, timeout: 1, timeoutUnit: 'hours' } },
      ],
      edges: [{ from: 'trigger', to: 'ask' }],
    });
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: {} });
    expect(started.status).toBe(202);
    await waitForRun(t.request, started.body.runId, { statuses: ['waiting'], timeoutMs: 60_000 });
    const pending = (await t.request('GET', '/api/v1/approvals')).body.items.find((i: any) => i.runId === started.body.runId);
    return { runId: started.body.runId as string, link: new URL(pending.approvalUrl).pathname };
  };

  it('checks approval fields against a catastrophic pattern in linear time, through REST', async () => {
    const { runId } = await waitingApproval(CATASTROPHIC);
    await expectNoStall(async () => {
      const refused = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, {
        body: { decision: 'approved', fields: { code: EVIL.repeat(100) } },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.details.fields).toEqual([{ field: 'fields.code', reason: `must match pattern "${CATASTROPHIC}"` }]);
    });
  });

  it('refuses a value too long to check against its pattern within the budget, saying so, through REST', async () => {
    // A pattern whose states defeat RE2's DFA: linear, but about a second over a megabyte.
    const { runId } = await waitingApproval('^[ab]*a[ab]{20}$');
    await expectNoStall(async () => {
      const refused = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, {
        body: { decision: 'approved', fields: { code: 'ab'.repeat(400_000) } },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.details.fields).toEqual([
        { field: 'fields', reason: expect.stringContaining('800000 characters is too long to check against the pattern') },
      ]);
    });
  });

  it('checks approval fields in linear time on the approval page, which needs no key', async () => {
    const { link } = await waitingApproval(CATASTROPHIC);
    await expectNoStall(async () => {
      const response = await fetch(t.url + link, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ decision: 'approved', 'f.code': EVIL.repeat(100) }).toString(),
      });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('fields.code');
    });
  });

  it("checks a workflow tool's arguments in linear time for a viewer calling it over MCP", async () => {
    const workflowId = await publish('spell tool', {
      nodes: [
        {
          id: 'tool',
          type: 'mcp-trigger',
          parameters: {
            toolName: 'spell_a',
            inputSchema: { type: 'object', properties: { word: { type: 'string', pattern: CATASTROPHIC } } },
          },
        },
      ],
      edges: [],
    });
    expect((await t.request('PUT', `/api/v1/workflows/${workflowId}/members/${viewer.id}`, { body: { role: 'viewer' } })).status).toBe(200);
    const client = new Client({ name: 'event-loop-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { 'x-api-key': viewer.key } } }),
    );
    try {
      await expectNoStall(async () => {
        const result = (await client.callTool({ name: 'spell_a', arguments: { word: EVIL.repeat(100) } })) as CallToolResult;
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toContain('must match pattern');
      });
    } finally {
      await client.close();
    }
  });

  it("checks arguments against an outside MCP server's tool schema in linear time", async () => {
    const workflowId = await publish('outside spell', {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'call', type: 'mcp-client', parameters: { url: outside.url, tool: 'spell', arguments: { word: EVIL.repeat(100) } } },
      ],
      edges: [{ from: 'trigger', to: 'call' }],
    });
    await expectNoStall(async () => {
      const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: {} });
      const record = await waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
      expect(record.status).toBe('failed');
      expect(record.error.message).toContain('must match pattern');
    });
    expect(outside.calls).toEqual([]);
  });

  it('fails a template that would hand the service a huge string, naming the node and parameter, before it is assembled', async () => {
    const workflowId = await publish('huge url', {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'fetch',
          type: 'http-request',
          parameters: { method: 'GET', url: 'http://127.0.0.1:9/${"x".repeat(2 ** 28)}' },
          parameterMode: { url: 'expression' },
        },
      ],
      edges: [{ from: 'trigger', to: 'fetch' }],
    });
    const rssBefore = process.memoryUsage().rss;
    await expectNoStall(async () => {
      const runs = await Promise.all(
        Array.from({ length: 4 }, () => t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: {} })),
      );
      for (const started of runs) {
        const record = await waitForRun(t.request, started.body.runId, { timeoutMs: 120_000 });
        expect(record.status).toBe('failed');
        expect(record.error).toMatchObject({
          code: 'EXPRESSION_FAILED',
          nodeId: 'fetch',
          details: { parameter: 'url', reason: expect.stringMatching(/^RESULT_TOO_LARGE: /) },
        });
      }
    });
    // 4 copies of 256 M characters would be a gigabyte at least.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
  });

  it.each([
    ['approval', 'fields', { summary: 'Go?', fields: { type: 'object', properties: { code: { type: 'string', pattern: '^(?=a)a+$' } } } }],
    ['approval', 'fields', { summary: 'Go?', fields: { type: 'object', properties: { code: { type: 'string', title: 5 } } } }],
    ['mcp-trigger', 'inputSchema', { inputSchema: { type: 'object', patternProperties: { '(a)\\1': { type: 'string' } } } }],
    ['ai-agent', 'outputSchema', { message: 'hi', outputSchema: { type: 'string', pattern: '(?<=a)b' } }],
  ])('refuses at save a %s whose %s no linear-time check can use, naming the node and field', async (type, parameter, parameters) => {
    const refused = await t.request('POST', '/api/v1/workflows', {
      body: { name: 'bad schema', definition: { nodes: [{ id: 'node', type, parameters }], edges: [] } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.fields).toContainEqual(
      expect.objectContaining({
        field: `nodes[0].parameters.${parameter}`,
        reason: expect.stringContaining(`${parameter} cannot be used`),
      }),
    );
  });
});
