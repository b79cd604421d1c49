import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp } from '../utils/test-app';
import { modernRpc, TASKS_EXTENSION } from './mcp.helpers';

/**
 * A workflow that takes three minutes, called as a task in both eras: the call answers at once,
 * the task works for the three minutes (far past the 60 s an MCP client waits for a request), and
 * its result is the workflow's output. It takes its three minutes: no clock is faked.
 */
const THREE_MINUTES_S = 180;

describe('a three-minute workflow as an MCP task', () => {
  let t: TestApp;
  let client: Client;

  beforeAll(async () => {
    t = await startTestApp();
    const definition = {
      nodes: [
        {
          id: 'ask',
          type: 'mcp-trigger',
          parameters: { toolName: 'slow_report', inputSchema: { type: 'object', properties: { topic: { type: 'string' } } } },
        },
        { id: 'think', type: 'wait', parameters: { amount: THREE_MINUTES_S, unit: 'seconds' } },
        { id: 'answer', type: 'respond', parameters: {} },
      ],
      edges: [
        { from: 'ask', to: 'think' },
        { from: 'think', to: 'answer' },
      ],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'Slow report', definition } });
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    client = new Client({ name: 'long-task-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers: { authorization: `Bearer ${t.admin.key}` } } }),
    );
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('answers at once, works for three minutes, and completes with the output, in both eras', async () => {
    const { task: legacy } = await client.request(
      { method: 'tools/call', params: { name: 'slow_report', arguments: { topic: 'tides' }, task: { ttl: 3_600_000 } } },
      CreateTaskResultSchema,
    );
    const capabilities = { extensions: { [TASKS_EXTENSION]: {} } };
    const modern = (
      await modernRpc(t.url, t.admin.key, 'tools/call', { name: 'slow_report', arguments: { topic: 'waves' } }, { capabilities })
    ).message.result;
    expect(legacy.status).toBe('working');
    expect(modern).toMatchObject({ resultType: 'task', status: 'working' });

    const statuses = { legacy: new Set<string>(), modern: new Set<string>() };
    let legacyDone = false;
    let modernDone: any;
    const deadline = Date.now() + (THREE_MINUTES_S + 240) * 1000;
    while (!(legacyDone && modernDone) && Date.now() < deadline) {
      if (!legacyDone) {
        const current = await client.experimental.tasks.getTask(legacy.taskId);
        statuses.legacy.add(current.status);
        legacyDone = current.status !== 'working';
      }
      if (!modernDone) {
        const current = (await modernRpc(t.url, t.admin.key, 'tasks/get', { taskId: modern.taskId }, { capabilities })).message.result;
        statuses.modern.add(current.status);
        if (current.status !== 'working') modernDone = current;
      }
      await new Promise((resolve) => setTimeout(resolve, legacy.pollInterval ?? 2000));
    }
    expect([...statuses.legacy]).toEqual(['working', 'completed']);
    expect([...statuses.modern]).toEqual(['working', 'completed']);
    const result = await client.experimental.tasks.getTaskResult(legacy.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ status: 'succeeded', output: { topic: 'tides' } });
    expect(modernDone.result.structuredContent).toMatchObject({ status: 'succeeded', output: { topic: 'waves' } });
    // Both tasks worked through the whole wait: the runs' records show the Wait node held them three minutes.
    for (const taskId of [legacy.taskId, modern.taskId]) {
      const run = (await t.request('GET', `/api/v1/runs/${taskId}`)).body;
      const think = run.steps.find((step: { nodeId: string }) => step.nodeId === 'think');
      expect(Date.parse(think.finishedAt) - Date.parse(think.startedAt)).toBeGreaterThanOrEqual(THREE_MINUTES_S * 1000);
    }
  }, 900_000);
});
