import type { Browser, Page } from 'playwright-core';
import { openConsoleBrowser } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { createCollection, upload, waitForFile } from './collections-files.helpers';

/**
 * The web doors as found from outside: a right-to-left override (U+202E) in a workflow name, a
 * file name or an error message stays inside that string on the approval page and in the console
 * (the service's own text after it reads as written), and the API explorer, where people type
 * their key, cannot be framed and loads only its own scripts, and still works in chromium.
 */
describe('web doors', () => {
  const RLO = '\u202e';
  const EVIL_NAME = `Payroll ${RLO}gnp.exe`;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];

  beforeAll(async () => {
    ({ browser, page, pageErrors } = await openConsoleBrowser({ viewport: { width: 1280, height: 860 } }));
    t = await startTestApp({ PUBLIC_URL: 'http://127.0.0.1/' });
  }, 120_000);
  // Closing chromium and the service took over a minute once at load 18.
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  }, 180_000);
  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  /** Each element whose text holds U+202E: it must be a <bdi> (or inside one) holding only the user's string. */
  const isolatedOverrides = (selector = 'body') =>
    page.$$eval(
      `${selector} *`,
      (elements, rlo) =>
        elements
          .filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 && (n.textContent ?? '').includes(rlo)))
          .map((e) => ({ isolated: e.closest('bdi') !== null, text: e.closest('bdi')?.textContent ?? e.textContent })),
      RLO,
    );

  it('isolates a workflow name and a summary with U+202E on the approval page', async () => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: EVIL_NAME,
        definition: {
          nodes: [
            { id: 'hook', type: 'webhook-trigger', parameters: {} },
            { id: 'ask', type: 'approval', parameters: { summary: `Pay ${RLO}000,1 EUR?`, timeout: 1, timeoutUnit: 'hours' } },
          ],
          edges: [{ from: 'hook', to: 'ask' }],
        },
      },
    });
    await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: {} });
    await waitForRun(t.request, started.body.runId, { statuses: ['waiting'], timeoutMs: 60_000 });
    const pending = (await t.request('GET', '/api/v1/approvals')).body.items.find((i: any) => i.runId === started.body.runId);
    await page.goto(t.url + new URL(pending.approvalUrl).pathname);
    await page.getByText('Approval requested').waitFor();
    const found = await isolatedOverrides();
    expect(found).toEqual(
      expect.arrayContaining([
        { isolated: true, text: EVIL_NAME },
        { isolated: true, text: `Pay ${RLO}000,1 EUR?` },
      ]),
    );
    expect(found.every((f) => f.isolated)).toBe(true);
    // The page's own words after the name are outside the isolate, as written.
    expect(await page.locator('.meta').textContent()).toContain(`${EVIL_NAME}, run ${started.body.runId}`);
  });

  it('isolates workflow names, file names and error messages with U+202E in the console', async () => {
    const workflow = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: EVIL_NAME,
        definition: {
          nodes: [
            { id: 'hook', type: 'webhook-trigger', parameters: {} },
            { id: 'boom', type: 'stop-and-error', parameters: { message: `failed ${RLO}elif eht` } },
          ],
          edges: [{ from: 'hook', to: 'boom' }],
        },
      },
    });
    const started = await t.request('POST', `/api/v1/workflows/${workflow.body.id}/runs`, { body: { runType: 'test' } });
    expect((await waitForRun(t.request, started.body.runId)).status).toBe('failed');
    const collection = await createCollection(t, `Files ${RLO}sdrawkcab`);
    const uploaded = await upload(t, collection, `report${RLO}txt.exe`, Buffer.from('plain words'), 'text/plain');
    await waitForFile(t, collection, uploaded.body.id, ['indexed', 'error']);

    await page.goto(`${t.url}/console/workflows`);
    await page.getByLabel('API key').fill(BOOTSTRAP_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: EVIL_NAME }).first().waitFor();
    expect((await isolatedOverrides('main')).every((f) => f.isolated)).toBe(true);

    await page.goto(`${t.url}/console/runs/${started.body.runId}`);
    await page.getByText('elif eht').first().waitFor();
    const onRun = await isolatedOverrides('main');
    expect(onRun.length).toBeGreaterThan(0);
    expect(onRun.every((f) => f.isolated)).toBe(true);

    await page.goto(`${t.url}/console/collections/${collection}`);
    await page.getByText(`report${RLO}txt.exe`).waitFor();
    const onCollection = await isolatedOverrides('main');
    expect(onCollection).toEqual(expect.arrayContaining([{ isolated: true, text: `report${RLO}txt.exe` }]));
    expect(onCollection.every((f) => f.isolated)).toBe(true);
  });

  it('sends a CSP, frame protection and nosniff with /docs and /docs/json', async () => {
    for (const path of ['/docs', '/docs/json', '/docs/swagger-ui-bundle.js']) {
      const response = await fetch(t.url + path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('keeps the Swagger UI working in chromium under its CSP: operations listed, one tried out', async () => {
    await page.goto(`${t.url}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
    const health = page.locator('.opblock', { hasText: '/health' }).first();
    await health.locator('.opblock-summary').click();
    await health.getByRole('button', { name: 'Try it out' }).click();
    await health.getByRole('button', { name: 'Execute' }).click();
    const status = health.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    expect(await status.textContent()).toContain('200');
  });
});
