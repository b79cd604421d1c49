import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode as RpcErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { rmSync } from 'node:fs';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { tempDir } from '../utils/processes';
import { ensureStdioBuild, modernRpc, STDIO_ENTRY, TASKS_EXTENSION, until } from './mcp.helpers';

/**
 * Workflow tool calls as MCP tasks, through the real service: the 2025-11-25 experimental tasks
 * with the SDK's v1 client, and the 2026-07-28 tasks extension at the wire (the SDK's v2 client
 * has no runtime for it; the official conformance suite drives it the same way). A task is its
 * run, so it survives a restart of the service.
 */

const pausing = (toolName: string, seconds: number) => ({
  nodes: [
    { id: 'ask', type: 'mcp-trigger', parameters: { toolName, inputSchema: { type: 'object', properties: { note: { type: 'string' } } } } },
    { id: 'pause', type: 'wait', parameters: { amount: seconds, unit: 'seconds' } },
    { id: 'answer', type: 'respond', parameters: {} },
  ],
  edges: [
    { from: 'ask', to: 'pause' },
    { from: 'pause', to: 'answer' },
  ],
});

const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

async function publish(t: TestApp, key: string, name: string, definition: unknown): Promise<string> {
  const created = await t.request('POST', '/api/v1/workflows', { key, body: { name, definition } });
  expect(created.status).toBe(201);
  expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`, { key })).status).toBe(201);
  return created.body.id;
}

async function connectV1(t: TestApp, key: string): Promise<Client> {
  const client = new Client({ name: 'tasks-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

const startTask = (client: Client, name: string) =>
  client.request({ method: 'tools/call', params: { name, arguments: { note: 'hi' }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);

describe('workflow tool calls as MCP tasks', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  const clients: Client[] = [];

  beforeAll(async () => {
    ensureStdioBuild();
    t = await startTestApp();
    [owner, stranger] = await Promise.all([t.createUser('tasks-owner'), t.createUser('tasks-stranger')]);
    await publish(t, owner.key, 'Pause briefly', pausing('pause_briefly', 2));
    await publish(t, owner.key, 'Pause long', pausing('pause_long', 600));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await t?.close();
  });

  const v1 = async (key: string) => {
    const client = await connectV1(t, key);
    clients.push(client);
    return client;
  };

  describe('2025-11-25 (experimental tasks), the v1 client', () => {
    it('offers workflow tools as tasks and answers at once; tasks/get reports working, then completed; tasks/result is what the call answers', async () => {
      const client = await v1(owner.key);
      expect(client.getServerCapabilities()?.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
      const tool = (await client.listTools()).tools.find((candidate) => candidate.name === 'pause_briefly')!;
      expect(tool.execution).toEqual({ taskSupport: 'optional' });

      const started = Date.now();
      const { task } = await startTask(client, 'pause_briefly');
      // At once: the run waits two seconds.
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(task).toMatchObject({
        taskId: expect.stringMatching(/^run_/),
        status: 'working',
        ttl: expect.any(Number),
        pollInterval: expect.any(Number),
      });
      expect(Date.parse(task.createdAt)).not.toBeNaN();

      const done = await until(
        () => client.experimental.tasks.getTask(task.taskId),
        (current) => current.status !== 'working',
      );
      expect(done).toMatchObject({ taskId: task.taskId, status: 'completed' });
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toEqual({ runId: task.taskId, status: 'succeeded', output: { note: 'hi' }, error: null });
      expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
      // The task is the run: its record says the same.
      expect((await t.request('GET', `/api/v1/runs/${task.taskId}`, { key: owner.key })).body).toMatchObject({
        status: 'succeeded',
        trigger: 'mcp',
      });
    });

    it('cancels the run with tasks/cancel, and refuses to cancel a task that ended', async () => {
      const client = await v1(owner.key);
      const { task } = await startTask(client, 'pause_long');
      const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
      expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
      // The run stops: at once when queued or waiting, at its next step when running.
      await until(
        async () => (await t.request('GET', `/api/v1/runs/${task.taskId}`, { key: owner.key })).body.status,
        (status) => status === 'canceled',
      );
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
      const again = await client.experimental.tasks.cancelTask(task.taskId).catch((error: unknown) => error);
      expect(again).toBeInstanceOf(McpError);
      expect((again as McpError).code).toBe(RpcErrorCode.InvalidParams);
    });

    it('runs a task through the STDIO program too, which follows the run through the REST API', async () => {
      const client = new Client({ name: 'tasks-e2e-stdio', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [STDIO_ENTRY],
          env: { PATH: process.env.PATH ?? '', SERVICE_URL: t.url, SERVICE_API_KEY: owner.key },
          stderr: 'pipe',
        }),
      );
      clients.push(client);
      const { task } = await startTask(client, 'pause_briefly');
      expect(task).toMatchObject({ status: 'working', ttl: 30 * 86_400_000 });
      await until(
        () => client.experimental.tasks.getTask(task.taskId),
        (current) => current.status === 'completed',
      );
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ runId: task.taskId, status: 'succeeded', output: { note: 'hi' } });
    });

    it("keeps a caller's tasks to that caller: anyone else's task id is unknown", async () => {
      const { task } = await startTask(await v1(owner.key), 'pause_briefly');
      const other = await v1(stranger.key);
      for (const attempt of [() => other.experimental.tasks.getTask(task.taskId), () => other.experimental.tasks.cancelTask(task.taskId)]) {
        const error = await attempt().catch((e: unknown) => e);
        expect((error as McpError).code).toBe(RpcErrorCode.InvalidParams);
        expect((error as McpError).message).toContain(`Unknown task ${task.taskId}`);
      }
    });
  });

  describe('2026-07-28 (the tasks extension), at the wire', () => {
    it('answers a task at once to a client declaring the extension; tasks/get inlines the result once completed', async () => {
      const created = await modernRpc(
        t.url,
        owner.key,
        'tools/call',
        { name: 'pause_briefly', arguments: { note: 'hi' } },
        { capabilities: WITH_TASKS },
      );
      expect(created.status).toBe(200);
      const task = created.message.result;
      expect(task).toMatchObject({
        resultType: 'task',
        taskId: expect.stringMatching(/^run_/),
        status: 'working',
        ttlMs: expect.any(Number),
        pollIntervalMs: expect.any(Number),
      });
      expect(task.task).toBeUndefined();
      const done = await until(
        async () => (await modernRpc(t.url, owner.key, 'tasks/get', { taskId: task.taskId }, { capabilities: WITH_TASKS })).message.result,
        (current) => current.status !== 'working',
      );
      expect(done).toMatchObject({ resultType: 'complete', taskId: task.taskId, status: 'completed' });
      expect(done.result.structuredContent).toEqual({ runId: task.taskId, status: 'succeeded', output: { note: 'hi' }, error: null });
      expect(done.result.content[0]).toEqual({ type: 'text', text: JSON.stringify(done.result.structuredContent) });
    });

    it('acknowledges tasks/cancel, and the task ends cancelled with its run', async () => {
      const created = await modernRpc(t.url, owner.key, 'tools/call', { name: 'pause_long', arguments: {} }, { capabilities: WITH_TASKS });
      const { taskId } = created.message.result;
      const ack = await modernRpc(t.url, owner.key, 'tasks/cancel', { taskId }, { capabilities: WITH_TASKS });
      expect(ack.message.result).toMatchObject({ resultType: 'complete' });
      expect(Object.keys(ack.message.result).filter((k) => k !== '_meta')).toEqual(['resultType']);
      expect((await modernRpc(t.url, owner.key, 'tasks/get', { taskId }, { capabilities: WITH_TASKS })).message.result.status).toBe(
        'cancelled',
      );
      await until(
        async () => (await t.request('GET', `/api/v1/runs/${taskId}`, { key: owner.key })).body.status,
        (status) => status === 'canceled',
      );
      // Cancelling again is acknowledged too (2026-07-28: idempotent); an unknown task is refused.
      expect((await modernRpc(t.url, owner.key, 'tasks/cancel', { taskId }, { capabilities: WITH_TASKS })).message.result).toBeDefined();
      expect(
        (await modernRpc(t.url, owner.key, 'tasks/get', { taskId: 'run_nope' }, { capabilities: WITH_TASKS })).message.error,
      ).toMatchObject({
        code: -32602,
      });
    });

    it('answers the call itself to a client that does not declare the extension, and refuses it the task methods (-32021)', async () => {
      const plain = await modernRpc(t.url, owner.key, 'tools/call', { name: 'pause_briefly', arguments: { note: 'x' } });
      expect(plain.message.result).toMatchObject({
        resultType: 'complete',
        structuredContent: { status: 'succeeded', output: { note: 'x' } },
      });
      const refused = await modernRpc(t.url, owner.key, 'tasks/get', { taskId: plain.message.result.structuredContent.runId });
      expect(refused.status).toBe(400);
      expect(refused.message.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
    });
  });
});

describe('an MCP task across a restart of the service', () => {
  it('is still there, and completes, after the service stopped and started again on the same data: it is its run', async () => {
    const dataDir = tempDir('mcp-task-restart');
    const boot = () => startTestApp({ DATA_DIR: dataDir });
    let t = await boot();
    try {
      await publish(t, t.admin.key, 'Outlives a restart', pausing('outlives_a_restart', 5));
      const before = await connectV1(t, t.admin.key);
      const { task } = await startTask(before, 'outlives_a_restart');
      // The run waits at the Wait node: the restart comes while it is in flight.
      await until(
        async () => (await t.request('GET', `/api/v1/runs/${task.taskId}`)).body.status,
        (status) => status === 'waiting',
      );
      expect((await before.experimental.tasks.getTask(task.taskId)).status).toBe('working');
      await before.close();
      await t.close();

      t = await boot();
      const after = await connectV1(t, t.admin.key);
      expect((await after.experimental.tasks.getTask(task.taskId)).status).toMatch(/^(working|completed)$/);
      await until(
        () => after.experimental.tasks.getTask(task.taskId),
        (current) => current.status === 'completed',
      );
      const result = await after.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toMatchObject({ runId: task.taskId, status: 'succeeded', output: { note: 'hi' } });
      await after.close();
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
