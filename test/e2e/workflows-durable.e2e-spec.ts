import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowScheduler } from '../../src/runs/workflow-scheduler.service';
import { startTestApp, TestApp } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

/**
 * What outlives the process: a run parked at a Wait node comes back after a restart (even when its
 * time came while the service was down), and a published schedule starts its runs in the booted app.
 */
describe('durable workflow runs', () => {
  let upstream: Upstream;
  let dataDir: string;
  let t: TestApp | undefined;

  beforeAll(async () => {
    upstream = await startUpstream();
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-durable-'));
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const boot = () => startTestApp({ DATA_DIR: dataDir, FETCH_ALLOWED_HOSTS: '127.0.0.1' });
  const echo = (id: string) => ({
    id,
    type: 'http-request',
    parameters: { method: 'POST', url: `${upstream.url}/echo/${id}`, body: 'input' },
    parameterMode: { body: 'expression' },
  });
  const publish = async (app: TestApp, definition: unknown) => {
    const created = await app.request('POST', '/api/v1/workflows', { body: { name: 'durable', definition } });
    expect(created.status).toBe(201);
    expect((await app.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };

  it('finishes a run that was waiting when the service stopped, once it is back', async () => {
    t = await boot();
    const workflowId = await publish(t, {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'pause', type: 'wait', parameters: { amount: 2, unit: 'seconds' } },
        echo('after'),
      ],
      edges: [
        { from: 'trigger', to: 'pause' },
        { from: 'pause', to: 'after' },
      ],
    });
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input: { order: 42 } } });
    expect(started.status).toBe(202);
    const waiting = await waitForRun(t.request, started.body.runId, { statuses: ['waiting'] });
    await t.close();
    t = undefined;

    // The resume time passes while nothing runs.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(waiting.resumeAt) - Date.now()) + 200));
    const seenBefore = upstream.received.length;
    t = await boot();
    const record = await waitForRun(t.request, started.body.runId);
    expect(record.status).toBe('succeeded');
    expect(record.steps.map((s: { nodeId: string; status: string }) => [s.nodeId, s.status])).toEqual([
      ['trigger', 'succeeded'],
      ['pause', 'succeeded'],
      ['after', 'succeeded'],
    ]);
    expect(record.steps[2].output.response.body.body).toEqual({ order: 42 });
    expect(upstream.received.length).toBe(seenBefore + 1);
  });

  it('lets a sub-workflow in progress finish when the service stops; the parent goes on after it at the next start', async () => {
    t ??= await boot();
    const child = await publish(t, {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        // A POST must not run twice: begun, it finishes even when the process stops.
        {
          id: 'slow',
          type: 'http-request',
          parameters: { method: 'POST', url: `${upstream.url}/slow?ms=1500`, body: 'input' },
          parameterMode: { body: 'expression' },
        },
        echo('child-after'),
      ],
      edges: [
        { from: 'trigger', to: 'slow' },
        { from: 'slow', to: 'child-after' },
      ],
    });
    const parent = await publish(t, {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'sub', type: 'execute-workflow', parameters: { workflowId: child } },
        echo('parent-after'),
      ],
      edges: [
        { from: 'trigger', to: 'sub' },
        { from: 'sub', to: 'parent-after' },
      ],
    });
    const calls = (path: string) => upstream.received.filter((r) => r.path === path).length;
    const seen = upstream.received.length;
    const started = await t.request('POST', `/api/v1/workflows/${parent}/runs`, { body: { input: { order: 7 } } });
    expect(started.status).toBe(202);
    await upstream.nth(seen + 1);
    await t.close();
    t = undefined;

    // The child ran to its end before the process stopped, and the parent's node kept its answer.
    expect(calls('/slow?ms=1500')).toBe(1);
    expect(calls('/echo/child-after')).toBe(1);
    expect(calls('/echo/parent-after')).toBe(0);
    t = await boot();
    const record = await waitForRun(t.request, started.body.runId);
    expect(record.status).toBe('succeeded');
    expect(record.children).toEqual([expect.objectContaining({ workflowId: child, status: 'succeeded' })]);
    expect(record.steps.find((s: { nodeId: string }) => s.nodeId === 'sub').output.response.body.path).toBe('/echo/child-after');
    expect(calls('/slow?ms=1500')).toBe(1);
    expect(calls('/echo/parent-after')).toBe(1);
  }, 60_000);

  it('starts one run per tick of a published schedule, as the owner, through the booted scheduler', async () => {
    t ??= await boot();
    const workflowId = await publish(t, {
      nodes: [{ id: 'tick', type: 'schedule-trigger', parameters: { cron: '*/5 * * * *', timezone: 'Europe/Paris' } }, echo('scheduled')],
      edges: [{ from: 'tick', to: 'scheduled' }],
    });
    // The scheduler's own loop reads the system clock; these ticks are driven at chosen times, years ahead.
    const scheduler = t.app.get(WorkflowScheduler);
    expect(await scheduler.tick(new Date('2031-03-10T09:01:00Z'))).toBe(0);
    expect(await scheduler.tick(new Date('2031-03-10T09:05:00Z'))).toBe(1);
    expect(await scheduler.tick(new Date('2031-03-10T09:05:00Z'))).toBe(0);

    const runs = await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`);
    expect(runs.body.total).toBe(1);
    const record = await waitForRun(t.request, runs.body.items[0].id);
    expect(record).toMatchObject({ status: 'succeeded', runType: 'production', input: { scheduledAt: '2031-03-10T09:05:00.000Z' } });
    expect(record.steps[1].output.response.body.body).toMatchObject({ scheduledAt: '2031-03-10T09:05:00.000Z' });
  });
});
