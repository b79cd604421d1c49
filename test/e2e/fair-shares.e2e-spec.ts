import { bothQueues } from '../utils/queues';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

const PER_USER = 8;
/** Each of user A's runs holds a worker this long: A's backlog cannot drain while the test looks. */
const SLOW_MS = 1500;

/**
 * Fair shares through the webhook (`POST /api/v1/workflows/:id/runs`), on both queues: one user
 * saturating the service meets their own 429 while another is still admitted, and the other's run
 * finishes while the first one's backlog is still there (ordering and progress, never time).
 */
describe.each(bothQueues('fair-shares'))('fair shares between users on $name', (queue) => {
  let t: TestApp;
  let upstream: Upstream;
  let heavy: TestUser;
  let light: TestUser;

  beforeAll(async () => {
    upstream = await startUpstream();
    t = await startTestApp({
      ...(await queue.env()),
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      JOB_CONCURRENCY: '1',
      RUNS_MAX_QUEUED: '30',
      RUNS_MAX_QUEUED_PER_USER: String(PER_USER),
      RUNS_REFUSAL_DELAY_MS: '0',
    });
    heavy = await t.createUser('heavy');
    light = await t.createUser('light');
  });

  afterAll(async () => {
    await t?.close();
    await upstream?.close();
    await queue.cleanup();
  });

  const workflow = async (user: TestUser, name: string, nodes: unknown[]): Promise<string> => {
    const trigger = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
    const edges = nodes.length ? [{ from: 'trigger', to: (nodes[0] as { id: string }).id }] : [];
    const created = await t.request('POST', '/api/v1/workflows', {
      key: user.key,
      body: { name, definition: { nodes: [trigger, ...nodes], edges } },
    });
    expect(created.status).toBe(201);
    return created.body.id;
  };
  const post = (user: TestUser, workflowId: string) =>
    t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { key: user.key, body: { runType: 'test', input: {} } });
  const queuedOf = async (workflowIds: string[]): Promise<number> => {
    let queued = 0;
    for (const id of workflowIds) {
      queued += (await t.request('GET', `/api/v1/runs?workflowId=${id}&status=queued&limit=100`, { key: heavy.key })).body.total;
    }
    return queued;
  };

  it("refuses a saturating user with their own 429 while another user's run is admitted, and runs it before the backlog drains", async () => {
    const slow = { id: 'slow', type: 'http-request', parameters: { method: 'GET', url: `${upstream.url}/slow?ms=${SLOW_MS}` } };
    const heavyFlows = [await workflow(heavy, 'a-1', [slow]), await workflow(heavy, 'a-2', [slow]), await workflow(heavy, 'a-3', [slow])];
    const lightFlow = await workflow(light, 'b', []);

    // User A posts over three workflows until refused: their own limit, never the service's.
    let refused: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 30 && !refused; i++) {
      const answer = await post(heavy, heavyFlows[i % heavyFlows.length]);
      if (answer.status !== 202) refused = answer;
    }
    expect(refused?.status).toBe(429);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused!.body).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('RUNS_MAX_QUEUED_PER_USER'),
      details: { reason: 'user-queue-limit', limit: PER_USER, actingUserId: heavy.id },
    });

    // User B is still admitted, and their run finishes while A's backlog is still queued.
    const admitted = await post(light, lightFlow);
    expect(admitted.status).toBe(202);
    const finished = await waitForRun(t.request, admitted.body.id, { key: light.key, timeoutMs: 60_000 });
    expect(finished.status).toBe('succeeded');
    expect(await queuedOf(heavyFlows)).toBeGreaterThanOrEqual(PER_USER / 2);

    const metrics = await t.request('GET', '/metrics', { key: null });
    expect(metrics.body).toMatch(/workflow_runs_refused_total\{reason="user-queue-limit",trigger="webhook"\} [1-9]/);
  });
});

/**
 * The per-user share in /metrics: an API-only process (APP_ROLE=api) runs no worker, so what is
 * admitted stays queued. The gauge reads the store, whichever queue carries the jobs.
 */
describe("the fullest user's share of the queue in /metrics", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ APP_ROLE: 'api', RUNS_MAX_QUEUED_PER_USER: '4', RUNS_REFUSAL_DELAY_MS: '0' });
  });

  afterAll(async () => {
    await t?.close();
  });

  /** The value of one sample of the exposition, or undefined when the series is absent. */
  const sample = (text: string, series: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  /** /metrics once its queue gauges (read at most every few seconds) show `queued` runs. */
  const metricsWith = async (queued: number): Promise<string> => {
    for (let attempt = 0; ; attempt++) {
      const text = (await t.request('GET', '/metrics', { key: null })).body as string;
      if (sample(text, 'workflow_runs_queued') === queued || attempt === 300) return text;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('shows the most queued runs of any one user beside the configured share, with no user label', async () => {
    const users = [await t.createUser('heavy'), await t.createUser('light')];
    const [heavyFlow, lightFlow] = await Promise.all(
      users.map(async (user) => {
        const created = await t.request('POST', '/api/v1/workflows', {
          key: user.key,
          body: { name: 'queued', definition: { nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }], edges: [] } },
        });
        expect(created.status).toBe(201);
        return created.body.id as string;
      }),
    );
    const post = (key: string, workflowId: string) =>
      t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { key, body: { runType: 'test', input: {} } });
    for (let i = 0; i < 3; i++) expect((await post(users[0].key, heavyFlow)).status).toBe(202);
    expect((await post(users[1].key, lightFlow)).status).toBe(202);

    let text = await metricsWith(4);
    expect(sample(text, 'workflow_runs_queued')).toBe(4);
    expect(sample(text, 'workflow_runs_queued_per_user_max')).toBe(3);
    expect(sample(text, 'workflow_runs_queued_per_user_limit')).toBe(4);

    // The heavy user fills their share: the gauge meets the limit, and the next run is refused.
    expect((await post(users[0].key, heavyFlow)).status).toBe(202);
    expect((await post(users[0].key, heavyFlow)).status).toBe(429);
    text = await metricsWith(5);
    expect(sample(text, 'workflow_runs_queued_per_user_max')).toBe(4);
    // One series each: no label names a user.
    expect(text.split('\n').filter((l) => l.startsWith('workflow_runs_queued_per_user'))).toEqual([
      'workflow_runs_queued_per_user_max 4',
      'workflow_runs_queued_per_user_limit 4',
    ]);
  });
});
