import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { RunEvents } from '../../src/runs/run-events';
import { SCREENSHOTS, openConsoleBrowser, seriousAxeViolations } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

jest.setTimeout(180_000);

/**
 * The console's chat panel in a real browser (Debian's chromium driven by playwright-core): talk to
 * a published chat workflow, see a streamed answer grow token by token and the final answer with
 * its run, with no serious or critical axe-core violation.
 */
describe('chat panel in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  let upstream: Server;
  const held: ServerResponse[] = [];
  let echoId: string;
  let gatedId: string;

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const axe = async (where: string) => expect(await seriousAxeViolations(page, where)).toEqual([]);
  const publish = async (name: string, definition: object) => {
    const created = await t.request('POST', '/api/v1/workflows', { body: { name, definition } });
    expect((await t.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id as string;
  };
  const conversation = () => page.getByRole('region', { name: 'Conversation' });

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => held.push(res));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    ({ browser, page, pageErrors } = await openConsoleBrowser({ viewport: { width: 1100, height: 900 } }));
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    echoId = await publish('Echo chat', {
      nodes: [
        { id: 'chat', type: 'chat-trigger', parameters: {} },
        { id: 'reply', type: 'code', parameters: { code: 'return { answer: `You said: ${input.message}` };' } },
      ],
      edges: [{ from: 'chat', to: 'reply' }],
    });
    gatedId = await publish('Volcano chat', {
      nodes: [
        { id: 'chat', type: 'chat-trigger', parameters: {} },
        {
          id: 'agent',
          type: 'http-request',
          parameters: { method: 'GET', url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/think` },
        },
        { id: 'reply', type: 'code', parameters: { code: 'return { text: "Etna is 3,357 m tall." };' } },
      ],
      edges: [
        { from: 'chat', to: 'agent' },
        { from: 'agent', to: 'reply' },
      ],
    });
    await page.goto(`${t.url}/console`);
    await page.getByLabel('API key').fill(BOOTSTRAP_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });
  afterEach(() => {
    expect(pageErrors).toEqual([]);
  });

  it('opens the panel from the workflow page and answers a message', async () => {
    await page.goto(`${t.url}/console/workflows/${echoId}`);
    await page.getByRole('link', { name: 'chat with it' }).click();
    await page.getByRole('heading', { level: 1, name: 'Chat: Echo chat' }).waitFor();
    await axe('empty chat panel');
    await page.getByRole('textbox', { name: 'Message' }).fill('hello there');
    await page.getByRole('button', { name: 'Send' }).click();
    await conversation().getByText('You said: hello there').waitFor();
    await conversation().locator('.badge-succeeded').waitFor();
    const runLink = conversation().getByRole('link', { name: /^run run_/ });
    const runId = (await runLink.textContent())!.replace(/^run /, '');
    expect((await t.request('GET', `/api/v1/runs/${runId}`)).body).toMatchObject({ trigger: 'chat', status: 'succeeded' });
    // Enter sends too, in the same session.
    await page.getByRole('textbox', { name: 'Message' }).fill('and again');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await conversation().getByText('You said: and again').waitFor();
    const runs = (await t.request('GET', `/api/v1/runs?workflowId=${echoId}`)).body.items as Array<{ id: string }>;
    const inputs = await Promise.all(runs.map(async (r) => (await t.request('GET', `/api/v1/runs/${r.id}`)).body.input));
    expect(new Set(inputs.map((input: { sessionId: string }) => input.sessionId)).size).toBe(1);
    await shot('chat-panel');
    await axe('chat panel with answers');
    // On a phone: no sideways scrolling, long ids and all.
    await page.setViewportSize({ width: 390, height: 844 });
    const wide = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    )) as { scroll: number; client: number };
    expect(wide.scroll).toBe(wide.client);
    await page.screenshot({ path: join(SCREENSHOTS, 'narrow-chat-panel.png'), fullPage: true });
    await axe('chat panel at 390 px');
    await page.setViewportSize({ width: 1100, height: 900 });
  });

  it('shows the answer growing as tokens stream in, then the final answer', async () => {
    await page.goto(`${t.url}/console/workflows/${gatedId}/chat`);
    await page.getByRole('textbox', { name: 'Message' }).fill('How tall is Etna?');
    await page.getByRole('button', { name: 'Send' }).click();
    const runLink = conversation().getByRole('link', { name: /^run run_/ });
    await runLink.waitFor();
    const runId = (await runLink.textContent())!.replace(/^run /, '');
    const deadline = Date.now() + 60_000;
    while (!held.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(held.length).toBe(1);
    const events = t.app.get(RunEvents, { strict: false });
    events.progress(runId, {
      nodeId: 'agent',
      type: 'substep',
      subStep: { kind: 'model', name: 'test-model', startedAt: new Date().toISOString(), durationMs: 5 },
    });
    events.progress(runId, { nodeId: 'agent', type: 'token', text: 'Etna is ' });
    events.progress(runId, { nodeId: 'agent', type: 'token', text: 'thinking' });
    await conversation().getByText('Etna is thinking').waitFor();
    await conversation().locator('.badge-running').waitFor();
    await axe('chat panel while streaming');
    held.splice(0).forEach((res) => res.end('{}'));
    await conversation().getByText('Etna is 3,357 m tall.').waitFor();
    await conversation()
      .getByText(/^What it did/)
      .click();
    await conversation().getByText('agent: model test-model').waitFor();
    await conversation().getByText('reply: succeeded').waitFor();
    expect((await waitForRun(t.request, runId)).status).toBe('succeeded');
    await shot('chat-panel-streamed');
  });

  it('says so when the workflow cannot chat', async () => {
    const webhook = await publish('Webhook only', { nodes: [{ id: 'hook', type: 'webhook-trigger', parameters: {} }], edges: [] });
    await page.goto(`${t.url}/console/workflows/${webhook}/chat`);
    await page.getByText(/The published version starts with/).waitFor();
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await axe('chat panel of a webhook workflow');
  });
});
