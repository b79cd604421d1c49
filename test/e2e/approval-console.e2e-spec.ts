import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { SCREENSHOTS, openConsoleBrowser, seriousAxeViolations } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

jest.setTimeout(180_000);

/**
 * Deciding approvals in a real browser (Debian's chromium driven by playwright-core): the console's
 * Approvals inbox lists a waiting approval with its fields form, Approve sends the run on along
 * `approved`; the signed link's page works without any script. Both pages have no serious or
 * critical axe-core violation.
 */
describe('approvals in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const axe = async (where: string) => expect(await seriousAxeViolations(page, where)).toEqual([]);

  const startWaiting = async (summary: string) => {
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'ask',
          type: 'approval',
          parameters: {
            summary,
            timeout: 1,
            timeoutUnit: 'hours',
            fields: {
              type: 'object',
              properties: { reason: { type: 'string', title: 'Reason', minLength: 3 }, urgent: { type: 'boolean', title: 'Urgent' } },
              required: ['reason'],
            },
          },
        },
        { id: 'done', type: 'set', parameters: { fields: { ok: true } } },
      ],
      edges: [
        { from: 'trigger', to: 'ask' },
        { from: 'ask', output: 'approved', to: 'done' },
      ],
    };
    const created = await t.request('POST', '/api/v1/workflows', { body: { name: 'needs approval', definition } });
    expect(created.status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, {
      body: { runType: 'test', input: { order: 1 } },
    });
    expect(started.status).toBe(202);
    await waitForRun(t.request, started.body.runId, { statuses: ['waiting'], timeoutMs: 60_000 });
    const pending = (await t.request('GET', '/api/v1/approvals')).body.items.find((i: any) => i.runId === started.body.runId);
    return { runId: started.body.runId as string, link: new URL(pending.approvalUrl).pathname };
  };

  beforeAll(async () => {
    ({ browser, page, pageErrors } = await openConsoleBrowser({ viewport: { width: 1280, height: 860 } }));
    t = await startTestApp();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(() => {
    expect(pageErrors).toEqual([]);
  });

  it('decides from the console inbox: the fields form, a refused field by name, then Approve', async () => {
    const { runId } = await startWaiting('Ship order 1 to the customer?');
    await page.goto(`${t.url}/console/approvals`);
    await page.getByLabel('API key').fill(BOOTSTRAP_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const card = page.getByRole('article', { name: `Approval ask of run ${runId}` });
    await card.getByText('Ship order 1 to the customer?').waitFor();
    await axe('approvals inbox');
    await shot('approvals-inbox');
    // A phone's width: no sideways scrolling, still no serious violation.
    await page.setViewportSize({ width: 390, height: 844 });
    const wide = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    )) as { scroll: number; client: number };
    expect(wide.scroll).toBeLessThanOrEqual(wide.client);
    await axe('approvals inbox at 390 px');
    await shot('approvals-inbox-390');
    await page.setViewportSize({ width: 1280, height: 860 });

    await card.getByLabel(/Reason/).fill('no');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.getByRole('alert').filter({ hasText: 'fields.reason' }).waitFor();

    await card.getByLabel(/Reason/).fill('checked the address');
    await card.getByLabel(/Urgent/).check();
    await card.getByRole('button', { name: 'Approve' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Run ${runId}: approved.` })
      .waitFor();
    await card.waitFor({ state: 'detached' });

    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    expect(record.steps.find((s: any) => s.nodeId === 'ask').output.approved).toMatchObject({
      decision: 'approved',
      fields: { reason: 'checked the address', urgent: true },
      decidedBy: { type: 'user' },
    });
    expect(record.steps.find((s: any) => s.nodeId === 'done').status).toBe('succeeded');
  });

  it('decides on the signed link page, which runs no script', async () => {
    const { runId, link } = await startWaiting('Publish the answer?');
    await page.goto(t.url + link);
    await page.getByText('Publish the answer?').waitFor();
    await axe('approval link page');
    await shot('approval-link-page');
    await page.getByLabel(/Reason/).fill('reviewed');
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('heading', { name: 'Rejected' }).waitFor();
    const record = await waitForRun(t.request, runId, { timeoutMs: 60_000 });
    expect(record.steps.find((s: any) => s.nodeId === 'ask').output.rejected).toMatchObject({
      decision: 'rejected',
      decidedBy: { type: 'link' },
      fields: { reason: 'reviewed', urgent: false },
    });
  });
});
