import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

/**
 * What the service says about itself stays true after boot: readiness counts the workflows
 * published since, a schedule starts at its first tick after publishing, and a run resumed after
 * a pause keeps its trigger's first times.
 */
describe('the truth after boot', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ REDIS_URL: '' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const publish = async (name: string, nodes: unknown[], edges: unknown[]): Promise<string> => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name, definition: { nodes, edges } } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };

  /** Starts a run of `id` and returns its id and its trigger's step once the run waits. */
  const startWaiting = async (id: string): Promise<{ runId: string; trigger: any }> => {
    const started = await t.request('POST', `/api/v1/workflows/${id}/runs`, { body: { input: {} } });
    expect(started.status).toBe(202);
    const waiting = await waitForRun(t.request, started.body.runId, { statuses: ['waiting'], timeoutMs: 30_000 });
    return { runId: started.body.runId, trigger: waiting.steps.find((s: any) => s.nodeId === 'trigger') };
  };

  /** The run once it ended, checked to have succeeded with its trigger's times those of `trigger`. */
  const succeededKeeping = async (runId: string, trigger: any): Promise<(nodeId: string) => any> => {
    const run = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('succeeded');
    const step = (nodeId: string) => run.steps.find((s: any) => s.nodeId === nodeId);
    expect(step('trigger')).toMatchObject({ status: 'succeeded', startedAt: trigger.startedAt, finishedAt: trigger.finishedAt });
    return step;
  };

  /** The `workflows` details of /health/ready, once the boot check is done. */
  const readyWorkflows = async (): Promise<{ published: number }> => {
    for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const res = await fetch(`${t.url}/health/ready`);
      const details = ((await res.json()) as { details: { workflows: { published?: number; checking?: boolean } } }).details.workflows;
      if (typeof details.published === 'number') return details as { published: number };
      if (Date.now() > deadline) throw new Error(`readiness still says ${JSON.stringify(details)}`);
    }
  };

  it('readiness counts the workflows published after boot', async () => {
    const before = (await readyWorkflows()).published;
    await publish('counted', [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }], []);
    expect((await readyWorkflows()).published).toBe(before + 1);
  });

  it('a run resumed after a wait keeps the times its trigger first ran at', async () => {
    const id = await publish(
      'paused',
      [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'pause', type: 'wait', parameters: { amount: 2, unit: 'seconds' } },
        { id: 'after', type: 'set', parameters: { fields: { done: true } } },
      ],
      [
        { from: 'trigger', to: 'pause' },
        { from: 'pause', to: 'after' },
      ],
    );
    const { runId, trigger } = await startWaiting(id);
    const step = await succeededKeeping(runId, trigger);
    expect(Date.parse(step('trigger').startedAt)).toBeLessThanOrEqual(Date.parse(step('pause').startedAt));
    expect(Date.parse(step('after').startedAt)).toBeGreaterThan(Date.parse(step('trigger').finishedAt));
  });

  it('and so does a run resumed after an approval', async () => {
    const id = await publish(
      'approved',
      [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'ask', type: 'approval', parameters: { summary: 'Go on?', timeout: 1, timeoutUnit: 'hours' } },
        { id: 'after', type: 'set', parameters: { fields: { done: true } } },
      ],
      [
        { from: 'trigger', to: 'ask' },
        { from: 'ask', output: 'approved', to: 'after' },
      ],
    );
    const { runId, trigger } = await startWaiting(id);
    // Decided at least a few ms after the trigger ran, so a rewritten start time would differ.
    await new Promise((r) => setTimeout(r, 20));
    const decided = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, { body: { decision: 'approved' } });
    expect(decided.status).toBeLessThan(300);
    const step = await succeededKeeping(runId, trigger);
    expect(step('after').status).toBe('succeeded');
  });

  it('a schedule published now starts a run at its next tick, not at the next reading of the list', async () => {
    // Every second: the next tick is at most a second away. Before, a new schedule was seen up
    // to 15 s after publishing. The second workflow is published right after the first one's
    // first run, so right after a reading of the list: a list read every 15 s keeps it waiting
    // about that long, where a publish that takes effect at once starts it within a second or two.
    const ticking = (name: string) =>
      publish(name, [{ id: 'tick', type: 'schedule-trigger', parameters: { cron: '* * * * * *', timezone: 'UTC' } }], []);
    const firstScheduledRun = async (id: string, withinMs: number): Promise<void> => {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const runs = await t.request('GET', `/api/v1/runs?workflowId=${id}&limit=5`);
        if (runs.body.items.some((r: any) => r.trigger === 'schedule')) return;
        if (Date.now() > deadline) throw new Error(`no scheduled run of ${id} within ${withinMs / 1000} s of publishing`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const first = await ticking('ticking');
    await firstScheduledRun(first, 30_000);
    const second = await ticking('ticking-too');
    await firstScheduledRun(second, 8_000);
    for (const id of [first, second]) expect((await t.request('DELETE', `/api/v1/workflows/${id}`)).status).toBeLessThan(300);
  });
});
