import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResult,
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequest,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { modernRpc, TASKS_EXTENSION, until } from './mcp.helpers';

/**
 * An approval node in a run started by an MCP client asks the client's user, when that user may
 * decide it (the editor role, as for the inbox) and the client can ask: a form (2025 elicitation,
 * 2026-07-28 input_required, a task's input requests) or the approval page (URL mode). The answer
 * decides it as the inbox would, recorded with who and when. A client that cannot ask gets the
 * signed link at once; a caller who may not decide is never asked. Arguments a call lacks are asked
 * for the same way.
 */

type Elicit = ElicitRequest['params'] & { requestedSchema?: { properties: Record<string, unknown>; required?: string[] } };

describe('approvals through the MCP client', () => {
  let t: TestApp;
  let owner: TestUser;
  let viewer: TestUser;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    // Long enough that a call which hung at the approval would fail its test by jest's timeout instead.
    t = await startTestApp({ MCP_TOOL_TIMEOUT_MS: '600000' });
    [owner, viewer] = await Promise.all([t.createUser('approver'), t.createUser('requester')]);
    const definition = {
      nodes: [
        {
          id: 'ask',
          type: 'mcp-trigger',
          parameters: {
            toolName: 'refund',
            description: 'Refunds an order once a person approves',
            inputSchema: { type: 'object', properties: { amount: { type: 'number', minimum: 1 } }, required: ['amount'] },
          },
        },
        {
          id: 'approve',
          type: 'approval',
          parameters: {
            summary: 'Refund ${input.amount} EUR?',
            fields: { type: 'object', properties: { reference: { type: 'string', title: 'Ticket reference' } }, required: ['reference'] },
            timeout: 1,
            timeoutUnit: 'hours',
          },
          parameterMode: { summary: 'expression' },
        },
        { id: 'done', type: 'respond', parameters: {} },
        { id: 'refused', type: 'respond', parameters: {} },
      ],
      edges: [
        { from: 'ask', to: 'approve' },
        { from: 'approve', output: 'approved', to: 'done' },
        { from: 'approve', output: 'rejected', to: 'refused' },
      ],
    };
    const created = await t.request('POST', '/api/v1/workflows', { key: owner.key, body: { name: 'Refund', definition } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`, { key: owner.key })).status).toBe(201);
    const shared = await t.request('PUT', `/api/v1/workflows/${created.body.id}/members/${viewer.id}`, {
      key: owner.key,
      body: { role: 'viewer' },
    });
    expect(shared.status).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(closers.map((close) => close().catch(() => undefined)));
    await t?.close();
  });

  /** A v1 (2025) client, with the elicitation modes given, answering each request with `answer`. */
  const v1 = async (key: string, modes: Record<string, object> | null, answer?: (request: Elicit) => Promise<Record<string, unknown>>) => {
    const client = new Client({ name: 'approvals-e2e', version: '1.0.0' }, { capabilities: modes ? { elicitation: modes } : {} });
    const asked: Elicit[] = [];
    if (modes)
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params as Elicit);
        return (await answer!(request.params as Elicit)) as never;
      });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    closers.push(() => client.close());
    return { client, asked };
  };

  const decidedRecord = async (runId: string) => {
    const run = (await t.request('GET', `/api/v1/runs/${runId}`, { key: owner.key })).body;
    return run.steps.find((step: { nodeId: string }) => step.nodeId === 'approve').output;
  };

  /** Decides by the signed link, as the approval page's form does. */
  const decideByLink = async (url: string, decision: 'approved' | 'rejected', reference: string) => {
    const response = await fetch(`${t.url}${new URL(url).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision, 'f.reference': reference }).toString(),
    });
    expect(response.status).toBe(200);
  };

  it("2025-11-25: asks the approver with a form holding the approval's fields; the answer decides it, recorded with who and when", async () => {
    const { client, asked } = await v1(owner.key, { form: {} }, async () => ({
      action: 'accept',
      content: { decision: 'approved', reference: 'T-1', comment: 'looks right' },
    }));
    const result = (await client.callTool({ name: 'refund', arguments: { amount: 30 } })) as CallToolResult;
    expect(asked).toHaveLength(1);
    expect(asked[0].message).toContain('Refund 30 EUR?');
    expect(asked[0].requestedSchema).toEqual({
      type: 'object',
      properties: {
        decision: { type: 'string', title: 'Decision', enum: ['approved', 'rejected'], default: 'approved' },
        comment: { type: 'string', title: 'Comment', description: 'Why (optional)', maxLength: 2000 },
        reference: { type: 'string', title: 'Ticket reference' },
      },
      required: ['decision', 'reference'],
    });
    expect(result.isError).toBeFalsy();
    const decision = {
      decision: 'approved',
      decidedBy: { type: 'user', userId: owner.id },
      decidedAt: expect.any(String),
      fields: { reference: 'T-1' },
      comment: 'looks right',
    };
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: decision });
    const runId = (result.structuredContent as { runId: string }).runId;
    // Recorded on the run exactly as a decision through the inbox or the link is.
    expect(await decidedRecord(runId)).toMatchObject({ approved: decision });
  });

  it('2026-07-28: asks with an input_required result the SDK client fulfils; a rejection takes the rejected path', async () => {
    const client = new V2Client(
      { name: 'approvals-e2e', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
    );
    const asked: Elicit[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as Elicit);
      return { action: 'accept', content: { decision: 'rejected', reference: 'T-2', comment: 'duplicate' } };
    });
    await client.connect(new V2Transport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${owner.key}` } } }));
    closers.push(() => client.close());
    expect(client.getProtocolEra()).toBe('modern');
    const result = await client.callTool({ name: 'refund', arguments: { amount: 12 } });
    expect(asked).toHaveLength(1);
    expect(result.structuredContent).toMatchObject({
      status: 'succeeded',
      output: { decision: 'rejected', decidedBy: { type: 'user', userId: owner.id }, fields: { reference: 'T-2' }, comment: 'duplicate' },
    });
  });

  it('asks for the arguments a call lacks with a form, then for the approval', async () => {
    const { client, asked } = await v1(owner.key, { form: {} }, async (request) =>
      request.requestedSchema?.properties.amount
        ? { action: 'accept', content: { amount: 45 } }
        : { action: 'accept', content: { decision: 'approved', reference: 'T-3' } },
    );
    const result = (await client.callTool({ name: 'refund', arguments: {} })) as CallToolResult;
    expect(asked.map((request) => Object.keys(request.requestedSchema!.properties))).toEqual([
      ['amount'],
      ['decision', 'comment', 'reference'],
    ]);
    expect(asked[1].message).toContain('Refund 45 EUR?');
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { decision: 'approved', input: { amount: 45 } } });
  });

  it('gives a client that cannot ask its user the signed link at once, never a hang; the link decides', async () => {
    const { client } = await v1(owner.key, null);
    const result = (await client.callTool({ name: 'refund', arguments: { amount: 7 } })) as CallToolResult;
    const answer = result.structuredContent as { runId: string; status: string; approval: { summary: string; approvalUrl: string } };
    expect(result.isError).toBe(true);
    expect(answer).toMatchObject({
      status: 'waiting',
      approval: { summary: 'Refund 7 EUR?', approvalUrl: expect.stringContaining('/approvals/') },
    });
    await decideByLink(answer.approval.approvalUrl, 'approved', 'T-4');
    const run = await until(
      async () => (await t.request('GET', `/api/v1/runs/${answer.runId}`, { key: owner.key })).body,
      (current) => current.status === 'succeeded',
    );
    expect(run.output).toMatchObject({ decision: 'approved', decidedBy: { type: 'link' }, fields: { reference: 'T-4' } });
  });

  it('opens the approval page in URL mode for a client that supports only that; the page decides', async () => {
    const { client, asked } = await v1(owner.key, { url: {} }, async (request) => {
      // The client's user opens the page and decides there.
      await decideByLink((request as { url: string }).url, 'approved', 'T-5');
      return { action: 'accept' };
    });
    const result = (await client.callTool({ name: 'refund', arguments: { amount: 9 } })) as CallToolResult;
    expect(asked).toEqual([
      expect.objectContaining({ mode: 'url', url: expect.stringContaining('/approvals/'), elicitationId: expect.any(String) }),
    ]);
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { decision: 'approved', decidedBy: { type: 'link' } } });
  });

  it('never asks a caller who may not decide (a viewer), nor shows them the link: the task waits for an editor', async () => {
    const { client, asked } = await v1(viewer.key, { form: {}, url: {} }, async () => ({
      action: 'accept',
      content: { decision: 'approved' },
    }));
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'refund', arguments: { amount: 99 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const waiting = await until(
      () => client.experimental.tasks.getTask(task.taskId),
      (current) => current.statusMessage?.startsWith('Waiting for an editor') ?? false,
    );
    expect(waiting.status).toBe('working');
    expect(waiting.statusMessage).not.toContain('/approvals/');
    // The editor decides through their inbox.
    const [pending] = (await t.request('GET', '/api/v1/approvals', { key: owner.key })).body.items.filter(
      (item: { runId: string }) => item.runId === task.taskId,
    );
    const decided = await t.request('POST', `/api/v1/runs/${task.taskId}/approvals/approve`, {
      key: owner.key,
      body: { decision: 'approved', fields: { reference: 'T-6' } },
    });
    expect(decided.status).toBe(200);
    expect(pending.approvalUrl).toContain('/approvals/');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { decidedBy: { type: 'user', userId: owner.id } } });
    expect(asked).toEqual([]);
  });

  it('2025-11-25 task: the task needs input, and tasks/result asks the approver over the session', async () => {
    const { client, asked } = await v1(owner.key, { form: {} }, async () => ({
      action: 'accept',
      content: { decision: 'approved', reference: 'T-7' },
    }));
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'refund', arguments: { amount: 5 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    await until(
      () => client.experimental.tasks.getTask(task.taskId),
      (current) => current.status === 'input_required',
    );
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(asked).toHaveLength(1);
    expect(asked[0]._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { decision: 'approved', fields: { reference: 'T-7' } } });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
  });

  it('2026-07-28 task: tasks/get shows the approval among its input requests, and tasks/update decides it', async () => {
    const capabilities = { extensions: { [TASKS_EXTENSION]: {} }, elicitation: { form: {} } };
    const created = await modernRpc(t.url, owner.key, 'tools/call', { name: 'refund', arguments: { amount: 3 } }, { capabilities });
    const { taskId } = created.message.result;
    const needing = await until(
      async () => (await modernRpc(t.url, owner.key, 'tasks/get', { taskId }, { capabilities })).message.result,
      (current) => current.status === 'input_required',
    );
    const [[key, request]] = Object.entries(needing.inputRequests as Record<string, { method: string; params: Elicit }>);
    expect(request).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', message: expect.stringContaining('Refund 3 EUR?') },
    });
    // Fields the approval refuses are refused at once, the request still open.
    const refused = await modernRpc(
      t.url,
      owner.key,
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'accept', content: { decision: 'approved' } } } },
      { capabilities },
    );
    expect(refused.message.error).toMatchObject({ code: -32602, message: expect.stringContaining('reference') });
    const ack = await modernRpc(
      t.url,
      owner.key,
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'accept', content: { decision: 'approved', reference: 'T-8' } } } },
      { capabilities },
    );
    expect(ack.message.result).toMatchObject({ resultType: 'complete' });
    const done = await until(
      async () => (await modernRpc(t.url, owner.key, 'tasks/get', { taskId }, { capabilities })).message.result,
      (current) => current.status === 'completed',
    );
    expect(done.result.structuredContent).toMatchObject({
      status: 'succeeded',
      output: { decision: 'approved', decidedBy: { type: 'user', userId: owner.id }, fields: { reference: 'T-8' } },
    });
  });
});
