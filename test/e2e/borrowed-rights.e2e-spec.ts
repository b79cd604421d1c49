import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowScheduler } from '../../src/runs/workflow-scheduler.service';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { ScriptedAgentLlm } from '../utils/scripted-agent-llm';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { TERMINAL, waitForRun } from '../utils/workflows-fixtures';
import { createCollection, upload, waitForFile } from './collections-files.helpers';

/**
 * No borrowed rights, through the real doors. The owner's parent workflows call a child workflow
 * that an editor of the child changed to read the owner's private collection: whatever started the
 * parent (webhook, schedule, MCP tool, agent tool, chat, node test, error workflow), the child acts
 * as the user who vouched for what it runs (the editor), never as the parent's user, so the
 * owner's files stay out of every record. Rights are checked again while a run lives, and the
 * service's own idempotency keys cannot be taken by a caller.
 */
describe('no borrowed rights', () => {
  const SECRET_TEXT = 'The vault combination is 31-41-59 and only the owner may read it.';
  const LLM_KEY = 'sk-borrowed-rights-0123';
  let t: TestApp;
  let embeddings: FakeEmbeddingsServer;
  let llm: ScriptedAgentLlm;
  let editor: TestUser;
  let privateCollection: string;
  let child: string;

  beforeAll(async () => {
    embeddings = await FakeEmbeddingsServer.start();
    llm = await ScriptedAgentLlm.start({ apiKey: LLM_KEY });
    t = await startTestApp({
      EMBEDDINGS_URL: embeddings.url,
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      LLM_URL: `${llm.url}/v1`,
      LLM_API_KEY: LLM_KEY,
      LLM_MODEL: 'scripted-mini',
    });
    editor = await t.createUser('editor');
    privateCollection = await createCollection(t, 'Vault');
    const uploaded = await upload(t, privateCollection, 'vault.txt', Buffer.from(SECRET_TEXT), 'text/plain');
    expect(uploaded.status).toBe(201);
    expect((await waitForFile(t, privateCollection, uploaded.body.id)).status).toBe('indexed');

    // The owner's child, a tool workflow shared with the editor, who makes it read the vault (by an
    // expression: a fixed collection they cannot read is refused at save) and publishes it.
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'child' } });
    child = created.body.id;
    expect((await t.request('PUT', `/api/v1/workflows/${child}/members/${editor.id}`, { body: { role: 'editor' } })).status).toBe(200);
    expect((await t.request('PUT', `/api/v1/workflows/${child}`, { key: editor.key, body: { definition: readTheVault() } })).status).toBe(
      200,
    );
    expect((await t.request('POST', `/api/v1/workflows/${child}/publish`, { key: editor.key })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await embeddings?.close();
    await llm?.close();
  });

  const readTheVault = () => ({
    nodes: [
      { id: 'tool', type: 'mcp-trigger', parameters: { toolName: 'vault_reader', inputSchema: { type: 'object', properties: {} } } },
      {
        id: 'list',
        type: 'list-files',
        parameters: { collectionId: `'${privateCollection}'`, offset: '0' },
        parameterMode: { collectionId: 'expression' },
      },
      { id: 'read', type: 'get-file-contents', parameters: {} },
    ],
    edges: [
      { from: 'tool', to: 'list' },
      { from: 'list', to: 'read' },
    ],
  });

  const callChild = (runType = 'production') => ({
    id: 'call',
    type: 'execute-workflow',
    parameters: { workflowId: child, runType, input: {} },
  });

  /** A published workflow of the owner's: `trigger` then the node calling the child. */
  const ownersParent = async (trigger: Record<string, unknown>, caller: Record<string, unknown> = callChild(), settings = {}) => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: `parent ${trigger.type}`,
        definition: { nodes: [trigger, caller], edges: [{ from: trigger.id, to: caller.id }] },
        settings,
      },
    });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };

  const runsOf = async (workflowId: string) =>
    ((await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`)).body.items as { id: string }[]).map((r) => r.id);

  /** The child's run started from `parentRunId`: it acted as the editor, read nothing, and nothing of the vault is in either record. */
  const expectChildActedAsEditor = async (parentRunId: string) => {
    const parent = await waitForRun(t.request, parentRunId, { timeoutMs: 60_000 });
    expect(parent.children).toHaveLength(1);
    const childRun = await waitForRun(t.request, parent.children[0].id, { timeoutMs: 60_000 });
    expect(childRun).toMatchObject({ trigger: 'sub-workflow', actingUserId: editor.id, status: 'failed', error: { nodeId: 'list' } });
    expect(JSON.stringify(parent)).not.toContain('31-41-59');
    expect(JSON.stringify(childRun)).not.toContain('31-41-59');
    return { parent, childRun };
  };

  it('webhook: the owner calling the child gets a child acting as the editor who published it', async () => {
    const parent = await ownersParent({ id: 'hook', type: 'webhook-trigger', parameters: {} });
    const started = await t.request('POST', `/api/v1/workflows/${parent}/runs`, { body: {} });
    const { parent: record } = await expectChildActedAsEditor(started.body.runId);
    expect(record).toMatchObject({ actingUserId: t.admin.id, status: 'failed' });
  });

  it('webhook, test runs: a child draft acts as whoever saved it last, so the owner vouching for it reads', async () => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'draft child' } });
    const draftChild = created.body.id as string;
    expect((await t.request('PUT', `/api/v1/workflows/${draftChild}/members/${editor.id}`, { body: { role: 'editor' } })).status).toBe(200);
    expect(
      (await t.request('PUT', `/api/v1/workflows/${draftChild}`, { key: editor.key, body: { definition: readTheVault() } })).status,
    ).toBe(200);
    const parent = await ownersParent(
      { id: 'hook', type: 'webhook-trigger', parameters: {} },
      { id: 'call', type: 'execute-workflow', parameters: { workflowId: draftChild, runType: 'test', input: {} } },
    );
    const asEditor = await t.request('POST', `/api/v1/workflows/${parent}/runs`, { body: {} });
    await expectChildActedAsEditor(asEditor.body.runId);

    expect((await t.request('GET', `/api/v1/workflows/${draftChild}`)).body.draftSavedBy).toBe(editor.id);
    // The owner saves the same draft: now the owner vouches for it, and it reads as the owner.
    const saved = await t.request('PUT', `/api/v1/workflows/${draftChild}`, { body: { definition: readTheVault() } });
    expect(saved.body.draftSavedBy).toBe(t.admin.id);
    const asOwner = await t.request('POST', `/api/v1/workflows/${parent}/runs`, { body: {} });
    const record = await waitForRun(t.request, asOwner.body.runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    expect((await waitForRun(t.request, record.children[0].id)).actingUserId).toBe(t.admin.id);
    expect(JSON.stringify(record.output)).toContain('31-41-59');
  });

  it('schedule: a tick of the owner’s schedule runs the child as the editor', async () => {
    const parent = await ownersParent({ id: 'tick', type: 'schedule-trigger', parameters: { cron: '*/5 * * * *', timezone: 'UTC' } });
    const scheduler = t.app.get(WorkflowScheduler);
    await scheduler.tick(new Date('2033-01-01T00:04:00Z'));
    expect(await scheduler.tick(new Date('2033-01-01T00:05:00Z'))).toBeGreaterThanOrEqual(1);
    const [runId] = await runsOf(parent);
    await expectChildActedAsEditor(runId);
  });

  it('MCP tool: the owner calling a tool whose workflow calls the child gets nothing of the vault', async () => {
    const parent = await ownersParent({
      id: 'tool',
      type: 'mcp-trigger',
      parameters: { toolName: 'borrowing_parent', inputSchema: { type: 'object', properties: {} } },
    });
    const client = new Client({ name: 'borrowed-rights-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { 'x-api-key': t.admin.key } } }),
    );
    try {
      const result = (await client.callTool({ name: 'borrowing_parent', arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result)).not.toContain('31-41-59');
    } finally {
      await client.close();
    }
    const [runId] = await runsOf(parent);
    await expectChildActedAsEditor(runId);
  });

  it('agent tool: an agent of the owner calling the child as a tool gets a child acting as the editor', async () => {
    llm.script = (request, turn) =>
      turn === 0
        ? { toolCalls: [{ name: 'vault_reader', arguments: {} }] }
        : { content: 'done: ' + JSON.stringify(request.body.messages.at(-1)) };
    const parent = await ownersParent(
      { id: 'hook', type: 'webhook-trigger', parameters: {} },
      { id: 'call', type: 'ai-agent', parameters: { message: 'open the vault', workflows: [child] } },
    );
    const started = await t.request('POST', `/api/v1/workflows/${parent}/runs`, { body: {} });
    const { parent: record } = await expectChildActedAsEditor(started.body.runId);
    expect(record.status).toBe('succeeded');
    expect(JSON.stringify(llm.requests)).not.toContain('31-41-59');
  });

  it('chat: a chat message to the owner’s chat workflow runs the child as the editor', async () => {
    const parent = await ownersParent({ id: 'chat', type: 'chat-trigger', parameters: {} });
    const answer = await t.request('POST', `/api/v1/workflows/${parent}/chat?stream=false`, {
      body: { sessionId: 's-1', message: 'open' },
    });
    expect(TERMINAL).toContain(answer.body.status);
    expect(JSON.stringify(answer.body)).not.toContain('31-41-59');
    await expectChildActedAsEditor(answer.body.runId);
  });

  it('node test: testing the calling node of the owner’s draft runs the child as the editor', async () => {
    const parent = await ownersParent({ id: 'hook', type: 'webhook-trigger', parameters: {} });
    const tested = await t.request('POST', `/api/v1/workflows/${parent}/node-tests`, { body: { nodeId: 'call', input: [{}] } });
    expect(tested.status).toBe(202);
    await expectChildActedAsEditor(tested.body.runId ?? tested.body.id);
  });

  it('error workflow: the owner’s error workflow calling the child runs it as the editor', async () => {
    const handler = await ownersParent({ id: 'failure', type: 'error-trigger', parameters: {} });
    const failing = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'fragile',
        definition: {
          nodes: [
            { id: 'hook', type: 'webhook-trigger', parameters: {} },
            { id: 'boom', type: 'stop-and-error', parameters: { message: 'down' } },
          ],
          edges: [{ from: 'hook', to: 'boom' }],
        },
        settings: { errorWorkflowId: handler },
      },
    });
    expect((await t.request('POST', `/api/v1/workflows/${failing.body.id}/publish`)).status).toBe(201);
    await t.request('POST', `/api/v1/workflows/${failing.body.id}/runs`, { body: {} });
    let runIds: string[] = [];
    for (const deadline = Date.now() + 60_000; runIds.length === 0 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      runIds = await runsOf(handler);
    }
    await expectChildActedAsEditor(runIds[0]);
  });

  it('refuses to run a child whose vouching user lost the editor role, naming them', async () => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'orphan child' } });
    const orphan = created.body.id as string;
    await t.request('PUT', `/api/v1/workflows/${orphan}/members/${editor.id}`, { body: { role: 'editor' } });
    const harmless = { nodes: [{ id: 'hook', type: 'webhook-trigger', parameters: {} }], edges: [] };
    expect((await t.request('PUT', `/api/v1/workflows/${orphan}`, { key: editor.key, body: { definition: harmless } })).status).toBe(200);
    expect((await t.request('POST', `/api/v1/workflows/${orphan}/publish`, { key: editor.key })).status).toBe(201);
    expect((await t.request('DELETE', `/api/v1/workflows/${orphan}/members/${editor.id}`)).status).toBe(204);
    const parent = await ownersParent(
      { id: 'hook', type: 'webhook-trigger', parameters: {} },
      { id: 'call', type: 'execute-workflow', parameters: { workflowId: orphan, input: {} } },
    );
    const started = await t.request('POST', `/api/v1/workflows/${parent}/runs`, { body: {} });
    const record = await waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
    expect(record).toMatchObject({ status: 'failed', error: { nodeId: 'call' } });
    expect(record.error.message).toContain(`acts as user ${editor.id}, who no longer holds the editor role`);
    expect(record.children).toEqual([]);
  });

  describe('re-checks while a run lives', () => {
    /** A workflow of the owner's, shared with `user` as editor, published. */
    const sharedWith = async (user: TestUser, definition: object) => {
      const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'shared', definition } });
      expect(created.status).toBe(201);
      expect((await t.request('PUT', `/api/v1/workflows/${created.body.id}/members/${user.id}`, { body: { role: 'editor' } })).status).toBe(
        200,
      );
      expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
      return created.body.id as string;
    };

    it('resumes a run waiting at an approval only while its acting user still holds the editor role', async () => {
      const user = await t.createUser('approver-gone');
      const workflowId = await sharedWith(user, {
        nodes: [
          { id: 'hook', type: 'webhook-trigger', parameters: {} },
          { id: 'ask', type: 'approval', parameters: { summary: 'Go?', timeout: 1, timeoutUnit: 'hours' } },
          { id: 'after', type: 'set', parameters: { fields: { went: 'on' } } },
        ],
        edges: [
          { from: 'hook', to: 'ask' },
          { from: 'ask', output: 'approved', to: 'after' },
        ],
      });
      const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { key: user.key, body: {} });
      await waitForRun(t.request, started.body.runId, { statuses: ['waiting'], timeoutMs: 60_000 });
      expect((await t.request('DELETE', `/api/v1/workflows/${workflowId}/members/${user.id}`)).status).toBe(204);
      expect((await t.request('POST', `/api/v1/runs/${started.body.runId}/approvals/ask`, { body: { decision: 'approved' } })).status).toBe(
        200,
      );
      const record = await waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
      expect(record).toMatchObject({ status: 'failed', error: { code: 'FORBIDDEN' } });
      expect(record.error.message).toContain(`acts as user ${user.id}, who no longer holds the editor role`);
      expect(record.steps.find((s: { nodeId: string }) => s.nodeId === 'after')?.status).not.toBe('succeeded');
    });

    it('resumes a run parked at a wait only while its acting user still holds a key that is not revoked', async () => {
      const user = await t.createUser('waiter-gone');
      const workflowId = await sharedWith(user, {
        nodes: [
          { id: 'hook', type: 'webhook-trigger', parameters: {} },
          { id: 'pause', type: 'wait', parameters: { amount: 2, unit: 'seconds' } },
          { id: 'after', type: 'set', parameters: { fields: { went: 'on' } } },
        ],
        edges: [
          { from: 'hook', to: 'pause' },
          { from: 'pause', to: 'after' },
        ],
      });
      const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { key: user.key, body: {} });
      await waitForRun(t.request, started.body.runId, { statuses: ['waiting'], timeoutMs: 60_000 });
      const keys = (await t.request('GET', '/api/v1/api-keys', { key: user.key })).body.items as { id: string }[];
      for (const key of keys) expect((await t.request('DELETE', `/api/v1/api-keys/${key.id}`, { key: user.key })).status).toBe(204);
      const record = await waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
      expect(record).toMatchObject({ status: 'failed', error: { code: 'FORBIDDEN' } });
      expect(record.error.message).toContain(`acts as user ${user.id}, whose API keys were all revoked`);
    });

    it('stops acting for a schedule whose user had all their keys revoked', async () => {
      const user = await t.createUser('scheduler-gone');
      const workflowId = await sharedWith(user, {
        nodes: [
          { id: 'tick', type: 'schedule-trigger', parameters: { cron: '*/5 * * * *', timezone: 'UTC' } },
          { id: 'shape', type: 'set', parameters: { fields: { ok: true } } },
        ],
        edges: [{ from: 'tick', to: 'shape' }],
      });
      expect((await t.request('POST', `/api/v1/workflows/${workflowId}/versions/1/activate`, { key: user.key })).status).toBe(200);
      const keys = (await t.request('GET', '/api/v1/api-keys', { key: user.key })).body.items as { id: string }[];
      for (const key of keys) expect((await t.request('DELETE', `/api/v1/api-keys/${key.id}`, { key: user.key })).status).toBe(204);
      const scheduler = t.app.get(WorkflowScheduler);
      await scheduler.tick(new Date('2034-01-01T00:04:00Z'));
      expect(await scheduler.tick(new Date('2034-01-01T00:05:00Z'))).toBeGreaterThanOrEqual(1);
      const [runId] = await runsOf(workflowId);
      const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
      expect(record).toMatchObject({ status: 'failed', trigger: 'schedule', actingUserId: user.id, error: { code: 'FORBIDDEN' } });
      expect(record.error.message).toContain('whose API keys were all revoked');
      expect(record.steps).toEqual([]);
    });

    it('ends an open chat stream once its key is revoked, while the run still waits', async () => {
      const user = await t.createUser('chatter');
      const workflowId = await sharedWith(user, {
        nodes: [
          { id: 'chat', type: 'chat-trigger', parameters: {} },
          { id: 'pause', type: 'wait', parameters: { amount: 5, unit: 'minutes' } },
        ],
        edges: [{ from: 'chat', to: 'pause' }],
      });
      const spare = await t.request('POST', '/api/v1/api-keys', { key: user.key, body: { name: 'spare' } });
      const response = await fetch(`${t.url}/api/v1/workflows/${workflowId}/chat`, {
        method: 'POST',
        headers: { 'x-api-key': user.key, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ sessionId: 's-2', message: 'hold on' }),
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('event: run')) text += decoder.decode((await reader.read()).value, { stream: true });
      const runId = /"runId":"(run_[^"]+)"/.exec(text)![1];
      await waitForRun(t.request, runId, { statuses: ['waiting'], timeoutMs: 60_000 });
      const keys = (await t.request('GET', '/api/v1/api-keys', { key: user.key })).body.items as { id: string; name: string }[];
      const streaming = keys.find((k) => k.id !== spare.body.id)!;
      expect((await t.request('DELETE', `/api/v1/api-keys/${streaming.id}`, { key: spare.body.key })).status).toBe(204);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toContain('event: error');
      expect(text).toContain('was revoked');
      expect(text).not.toContain('event: done');
      expect((await t.request('GET', `/api/v1/runs/${runId}`)).body.status).toBe('waiting');
    });
  });

  it("keeps the service's own idempotency keys apart: a caller's key cannot take a schedule tick's run", async () => {
    const workflowId = await ownersParent(
      { id: 'tick', type: 'schedule-trigger', parameters: { cron: '*/5 * * * *', timezone: 'UTC' } },
      { id: 'shape', type: 'set', parameters: { fields: { ok: true } } },
    );
    await t.request('PUT', `/api/v1/workflows/${workflowId}/members/${editor.id}`, { body: { role: 'editor' } });
    const tick = '2035-01-01T00:05:00.000Z';
    const sneaky = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, {
      key: editor.key,
      body: {},
      headers: { 'idempotency-key': `schedule:${tick}` },
    });
    expect(sneaky.status).toBe(202);
    const scheduler = t.app.get(WorkflowScheduler);
    await scheduler.tick(new Date('2035-01-01T00:04:00Z'));
    expect(await scheduler.tick(new Date(tick))).toBeGreaterThanOrEqual(1);
    const runs = (await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`)).body.items as { id: string; trigger: string }[];
    expect(runs.map((r) => r.trigger).sort()).toEqual(['schedule', 'webhook']);
  });
});
