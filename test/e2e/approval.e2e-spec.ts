import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { bothQueues } from '../utils/queues';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

/**
 * The approval node through its doors: the signed link's page (GET shows, POST decides once),
 * REST for editors, the inbox, bad fields, the timeout branch, and a restart while it waits.
 */
describe.each(bothQueues('approval'))('human approval on $name', (queue) => {
  let upstream: Upstream;
  let queueEnv: Record<string, string>;
  let dataDir: string;
  let t: TestApp;
  let editor: TestUser;
  let viewer: TestUser;

  const boot = () =>
    startTestApp({ ...queueEnv, DATA_DIR: dataDir, FETCH_ALLOWED_HOSTS: '127.0.0.1', PUBLIC_URL: 'https://approvals.example.com/' });

  beforeAll(async () => {
    queueEnv = await queue.env();
    upstream = await startUpstream();
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-approval-'));
    t = await boot();
    editor = await t.createUser('editor');
    viewer = await t.createUser('viewer');
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
    await queue.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const echo = (id: string) => ({
    id,
    type: 'http-request',
    parameters: { method: 'POST', url: `${upstream.url}/echo/${id}`, body: 'JSON.stringify(input)' },
    parameterMode: { body: 'expression' },
  });

  /** trigger -> ask -> approved / rejected / timedOut, each to an echo node of that name. */
  const approvalWorkflow = async (ask: Record<string, unknown> = {}, parameterMode: Record<string, string> = {}) => {
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'ask',
          type: 'approval',
          parameters: { summary: 'Send the refund?', timeout: 1, timeoutUnit: 'hours', ...ask },
          parameterMode,
        },
        echo('onApproved'),
        echo('onRejected'),
        echo('onTimedOut'),
      ],
      edges: [
        { from: 'trigger', to: 'ask' },
        { from: 'ask', output: 'approved', to: 'onApproved' },
        { from: 'ask', output: 'rejected', to: 'onRejected' },
        { from: 'ask', output: 'timedOut', to: 'onTimedOut' },
      ],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: `approval ${Date.now()}`, definition } });
    expect(created.status).toBe(201);
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    expect((await t.request('PUT', `/api/v1/workflows/${created.body.id}/members/${editor.id}`, { body: { role: 'editor' } })).status).toBe(
      200,
    );
    expect((await t.request('PUT', `/api/v1/workflows/${created.body.id}/members/${viewer.id}`, { body: { role: 'viewer' } })).status).toBe(
      200,
    );
    return created.body.id as string;
  };

  /** Starts a run and returns it once it waits at the approval, with the link's path on this server. */
  const startWaiting = async (workflowId: string, input: unknown = { amount: 30 }) => {
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input } });
    expect(started.status).toBe(202);
    const run = await waitForRun(t.request, started.body.runId, { statuses: ['waiting'], timeoutMs: 60_000 });
    const step = run.steps.find((s: any) => s.nodeId === 'ask');
    expect(step).toMatchObject({
      status: 'waiting',
      output: { status: 'pending', summary: expect.any(String), expiresAt: expect.any(String) },
    });
    // The link is a capability: viewers read the run record, so it is never there; editors find it in their inbox.
    expect(JSON.stringify((await t.request('GET', `/api/v1/runs/${started.body.runId}`, { key: viewer.key })).body)).not.toContain(
      '/approvals/',
    );
    const pending = (await t.request('GET', '/api/v1/approvals', { key: editor.key })).body.items.find(
      (i: any) => i.runId === started.body.runId,
    );
    const url = new URL(pending.approvalUrl);
    expect(url.origin).toBe('https://approvals.example.com');
    return { runId: started.body.runId as string, run, link: url.pathname, step };
  };

  /** For approvals that time out soon: the link as the node's notify request carried it, seen or not in the waiting state. */
  const startNotifying = async (workflowId: string, input: unknown) => {
    const started = await t.request('POST', `/api/v1/workflows/${workflowId}/runs`, { body: { input } });
    expect(started.status).toBe(202);
    const runId = started.body.runId as string;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const sent = upstream.received.find((r) => r.path === '/notify' && JSON.parse(r.body).runId === runId);
      if (sent) {
        const body = JSON.parse(sent.body);
        expect(body).toMatchObject({ nodeId: 'ask', workflowId, summary: 'Send the refund?', expiresAt: expect.any(String) });
        return { runId, link: new URL(body.approvalUrl).pathname };
      }
      if (Date.now() > deadline) throw new Error(`no notify request for run ${runId}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const page = async (path: string, form?: Record<string, string>) => {
    const response = await fetch(
      t.url + path,
      form
        ? { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() }
        : {},
    );
    return { status: response.status, headers: response.headers, html: await response.text() };
  };

  const stepOf = (run: any, nodeId: string) => run.steps.find((s: any) => s.nodeId === nodeId);

  it('decides by the signed link: the page shows the summary, POST approves, the run goes on along approved', async () => {
    const workflowId = await approvalWorkflow({ summary: 'Refund ${input.amount} EUR?' }, { summary: 'expression' });
    const { runId, link } = await startWaiting(workflowId);

    const shown = await page(link);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-type')).toContain('text/html');
    expect(shown.html).toContain('Refund 30 EUR?');
    expect(shown.html).not.toContain('<script');
    const csp = shown.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(shown.headers.get('referrer-policy')).toBe('no-referrer');

    const decided = await page(link, { decision: 'approved', comment: 'fine' });
    expect(decided.status).toBe(200);
    expect(decided.html).toContain('Approved');

    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    expect(stepOf(record, 'ask')).toMatchObject({
      status: 'succeeded',
      output: {
        approved: {
          decision: 'approved',
          decidedBy: { type: 'link' },
          comment: 'fine',
          fields: null,
          summary: 'Refund 30 EUR?',
          input: { amount: 30 },
        },
      },
    });
    expect(stepOf(record, 'onApproved').status).toBe('succeeded');
    expect(stepOf(record, 'onRejected').status).toBe('skipped');
    expect(stepOf(record, 'onTimedOut').status).toBe('skipped');
    // The approved branch received the decision.
    expect(stepOf(record, 'onApproved').output.response.body.body).toMatchObject({ decision: 'approved', decidedAt: expect.any(String) });

    // Reused: refused, as a page and without changing anything.
    const again = await page(link, { decision: 'rejected' });
    expect(again.status).toBe(409);
    expect(again.html).toContain('already decided');
    expect((await page(link)).status).toBe(409);
  });

  it('refuses an expired link with 410, and a forged one with 404', async () => {
    const workflowId = await approvalWorkflow({ timeout: 1, timeoutUnit: 'seconds', notifyUrl: `${upstream.url}/notify` });
    const { runId, link } = await startNotifying(workflowId, { amount: 1 });
    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    const expired = await page(link);
    expect(expired.status).toBe(410);
    expect(expired.html).toContain('expired');
    expect((await page(link, { decision: 'approved' })).status).toBe(410);

    const [payload, signature] = link.split('/').pop()!.split('.');
    const forged = `/approvals/${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await page(forged)).status).toBe(404);
  });

  it('goes on along timedOut when nobody decides in time', async () => {
    const workflowId = await approvalWorkflow({ timeout: 2, timeoutUnit: 'seconds', notifyUrl: `${upstream.url}/notify` });
    const { runId } = await startNotifying(workflowId, { order: 9 });
    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    expect(stepOf(record, 'ask').output).toEqual({
      timedOut: expect.objectContaining({ decision: 'timedOut', decidedBy: null, input: { order: 9 } }),
    });
    expect(stepOf(record, 'onTimedOut').status).toBe('succeeded');
    expect(stepOf(record, 'onApproved').status).toBe('skipped');
    // Too late by REST as well.
    const late = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, { key: editor.key, body: { decision: 'approved' } });
    expect(late.status).toBe(410);
  });

  it('decides by REST for editors only, lists it in the inbox, and refuses bad fields naming them', async () => {
    const fields = {
      type: 'object',
      properties: { reason: { type: 'string', minLength: 3 }, amount: { type: 'number' } },
      required: ['reason'],
    };
    const workflowId = await approvalWorkflow({ fields });
    const { runId } = await startWaiting(workflowId);

    const inbox = await t.request('GET', '/api/v1/approvals', { key: editor.key });
    expect(inbox.status).toBe(200);
    expect(inbox.body.items).toContainEqual(
      expect.objectContaining({ runId, nodeId: 'ask', summary: 'Send the refund?', fields, workflowId, expiresAt: expect.any(String) }),
    );
    // A viewer may not decide, so nothing waits in their inbox.
    expect((await t.request('GET', '/api/v1/approvals', { key: viewer.key })).body.items.map((i: any) => i.runId)).not.toContain(runId);

    const byViewer = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, {
      key: viewer.key,
      body: { decision: 'approved', fields: { reason: 'ok ok' } },
    });
    expect(byViewer.status).toBe(403);

    const badDecision = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, { key: editor.key, body: { decision: 'maybe' } });
    expect(badDecision.status).toBe(400);
    expect(JSON.stringify(badDecision.body.details)).toContain('decision');

    const badFields = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, {
      key: editor.key,
      body: { decision: 'rejected', fields: { amount: 'lots' } },
    });
    expect(badFields.status).toBe(400);
    const named = badFields.body.details.fields.map((f: any) => f.field);
    expect(named).toEqual(expect.arrayContaining(['fields.reason', 'fields.amount']));

    const notApproval = await t.request('POST', `/api/v1/runs/${runId}/approvals/trigger`, {
      key: editor.key,
      body: { decision: 'approved' },
    });
    expect(notApproval.status).toBe(404);

    const decided = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, {
      key: editor.key,
      body: { decision: 'rejected', fields: { reason: 'too much', amount: 5 } },
    });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({
      decision: 'rejected',
      decidedBy: { type: 'user', userId: editor.id },
      fields: { reason: 'too much', amount: 5 },
    });
    const twice = await t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, {
      key: editor.key,
      body: { decision: 'approved', fields: { reason: 'changed my mind' } },
    });
    expect(twice.status).toBe(409);

    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    expect(stepOf(record, 'onRejected').status).toBe('succeeded');
    expect(stepOf(record, 'onApproved').status).toBe('skipped');
    expect(stepOf(record, 'ask').output.rejected).toMatchObject({
      decision: 'rejected',
      fields: { reason: 'too much', amount: 5 },
      decidedBy: { type: 'user', userId: editor.id },
    });
    expect((await t.request('GET', '/api/v1/approvals', { key: editor.key })).body.items.map((i: any) => i.runId)).not.toContain(runId);
  });

  it('shows the fields form on the link page and refuses bad fields there with 400 naming the field', async () => {
    const fields = { type: 'object', properties: { reason: { type: 'string', minLength: 3, title: 'Reason' } }, required: ['reason'] };
    const { runId, link } = await startWaiting(await approvalWorkflow({ fields }));
    const shown = await page(link);
    expect(shown.html).toContain('name="f.reason"');
    const bad = await page(link, { decision: 'approved', 'f.reason': 'no' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('fields.reason');
    const good = await page(link, { decision: 'approved', 'f.reason': 'looks right' });
    expect(good.status).toBe(200);
    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(stepOf(record, 'ask').output.approved.fields).toEqual({ reason: 'looks right' });
  });

  it("lets exactly one of two decisions made at once through, and refuses a canceled run's link", async () => {
    const workflowId = await approvalWorkflow();
    const { runId, link } = await startWaiting(workflowId);
    const [byLink, byRest] = await Promise.all([
      page(link, { decision: 'rejected' }),
      t.request('POST', `/api/v1/runs/${runId}/approvals/ask`, { key: editor.key, body: { decision: 'approved' } }),
    ]);
    expect([byLink.status, byRest.status].sort()).toEqual([200, 409]);
    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    const winner = byLink.status === 200 ? 'rejected' : 'approved';
    expect(stepOf(record, 'ask').output[winner].decision).toBe(winner);
    expect(stepOf(record, winner === 'approved' ? 'onApproved' : 'onRejected').status).toBe('succeeded');

    const canceled = await startWaiting(workflowId);
    expect((await t.request('POST', `/api/v1/runs/${canceled.runId}/cancel`)).status).toBe(200);
    const refused = await page(canceled.link, { decision: 'approved' });
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('canceled');
  });

  it('keeps waiting across a restart, then takes the decision and finishes', async () => {
    const workflowId = await approvalWorkflow();
    const { runId, link } = await startWaiting(workflowId, { order: 77 });
    await t.close();
    t = await boot();
    expect((await t.request('GET', `/api/v1/runs/${runId}`)).body.status).toBe('waiting');
    expect((await page(link)).status).toBe(200);
    expect((await page(link, { decision: 'approved' })).status).toBe(200);
    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    expect(stepOf(record, 'onApproved').status).toBe('succeeded');
    expect(stepOf(record, 'ask').output.approved.input).toEqual({ order: 77 });
  });
});
