import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

/** Small truths a caller relies on: what node-types, GET and cancel answer. */
describe('what the workflows API answers', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('calls every trigger a trigger in node-types, the ones that also schedule or offer a tool too', async () => {
    const types = (await t.request('GET', '/api/v1/node-types')).body.items as Array<{ type: string; trigger: boolean }>;
    const triggers = types
      .filter((n) => n.trigger)
      .map((n) => n.type)
      .sort();
    expect(triggers).toEqual(expect.arrayContaining(['error-trigger', 'mcp-trigger', 'schedule-trigger', 'webhook-trigger']));
    expect(types.find((n) => n.type === 'http-request')?.trigger).toBe(false);
  });

  it('takes back the definition GET gives, secrets and all, unchanged', async () => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'round trip',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {}, position: { x: 10, y: 20 } },
            {
              id: 'call',
              type: 'http-request',
              parameters: { method: 'GET', url: '${variables.base}/x', headers: '{}' },
              parameterMode: { url: 'expression' },
              retry: { maxAttempts: 2 },
            },
          ],
          edges: [{ from: 'trigger', to: 'call' }],
          variables: [
            { name: 'base', type: 'string', value: 'https://example.com' },
            { name: 'token', type: 'secret', value: 's3cr3t-value' },
          ],
        },
      },
    });
    expect(created.status).toBe(201);
    const read = await t.request('GET', `/api/v1/workflows/${created.body.id}`);
    expect(read.body.definition.variables[1]).toEqual({ name: 'token', type: 'secret', value: null, set: true });
    const put = await t.request('PUT', `/api/v1/workflows/${created.body.id}`, { body: { definition: read.body.definition } });
    expect(put.status).toBe(200);
    expect(put.body.definition).toEqual(read.body.definition);
    // The secret kept its value: a run reads it.
    const again = await t.request('GET', `/api/v1/workflows/${created.body.id}`);
    expect(again.body.definition).toEqual(read.body.definition);
  });

  it('says a waiting run was canceled while waiting, and ends its waiting step canceled', async () => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'patient',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'pause', type: 'wait', parameters: { amount: 1, unit: 'hours' } },
            { id: 'after', type: 'set', parameters: { fields: { done: true } } },
          ],
          edges: [
            { from: 'trigger', to: 'pause' },
            { from: 'pause', to: 'after' },
          ],
        },
      },
    });
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test' } });
    await waitForRun(t.request, started.body.id, { statuses: ['waiting'] });
    const canceled = await t.request('POST', `/api/v1/runs/${started.body.id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({
      status: 'canceled',
      error: { code: 'CANCELED', message: 'The run was canceled while waiting at node "pause"', nodeId: 'pause' },
    });
    const record = await t.request('GET', `/api/v1/runs/${started.body.id}`);
    expect(record.body.steps.map((s: { nodeId: string; status: string }) => [s.nodeId, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['pause', 'canceled'],
    ]);
  });

  it('reports at boot, and in /health/ready, a published workflow whose node type is no longer loaded', async () => {
    const plugins = mkdtempSync(join(tmpdir(), 'wcs-plugins-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'wcs-answers-'));
    const sdk = join(__dirname, '..', '..', 'src', 'sdk');
    mkdirSync(join(plugins, 'shout'));
    writeFileSync(
      join(plugins, 'shout', 'index.js'),
      `const { defineNode } = require(${JSON.stringify(sdk)});
       class Params {}
       module.exports = { default: defineNode({ type: 'shout', version: 1, displayName: 'Shout', description: 'x', parameters: Params, defaultRunMode: 'input', execute: (ctx) => ctx.input }) };`,
    );
    let app: TestApp | undefined;
    try {
      app = await startTestApp({ DATA_DIR: dataDir, PLUGIN_PATHS: plugins });
      const created = await app.request('POST', '/api/v1/workflows', {
        body: {
          name: 'loud',
          definition: {
            nodes: [
              { id: 'trigger', type: 'webhook-trigger', parameters: {} },
              { id: 'say', type: 'shout', parameters: {} },
            ],
            edges: [{ from: 'trigger', to: 'say' }],
          },
        },
      });
      expect((await app.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
      await app.close();
      // The plugin is gone at the next start.
      app = await startTestApp({ DATA_DIR: dataDir });
      let ready = await app.request('GET', '/health/ready', { key: null });
      for (
        const deadline = Date.now() + 20_000;
        ready.body?.info?.workflows?.checking && Date.now() < deadline;
        await new Promise((r) => setTimeout(r, 50))
      ) {
        ready = await app.request('GET', '/health/ready', { key: null });
      }
      expect(ready.status).toBe(200);
      expect(ready.body.info.workflows).toMatchObject({
        status: 'up',
        published: 1,
        broken: [
          { workflowId: created.body.id, name: 'loud', problems: [expect.objectContaining({ reason: expect.stringContaining('shout') })] },
        ],
      });
    } finally {
      await app?.close();
      rmSync(plugins, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
