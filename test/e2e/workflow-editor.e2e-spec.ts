import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { canvasHands, openConsoleBrowser, SCREENSHOTS, seriousAxeViolations } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

jest.setTimeout(240_000);

/**
 * The editor's inspector in a real browser against the real app, beyond what the canvas suite
 * covers (building by mouse, publishing, the run drawn): one node tested on pinned and typed data
 * and the test drawn on the canvas; node settings (retries, onError with its error port) with the
 * server's refusal beside the field; the credentials page, whose secrets never reach the page, and
 * a credential chosen from a dropdown in an http-request node. axe-core finds no serious or
 * critical violation on any of it.
 */
describe('workflow editor in a browser: node tests, node settings, credentials', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  let workflowId: string;
  let credentialId: string;
  const SECRET = 'sk-never-shown-4242';
  const ROTATED = 'sk-rotated-never-shown-9090';

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
  const definition = async () => (await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.definition;
  const { node, dragMouse, connect, addNode } = canvasHands(() => page);
  const axe = async (where: string) => expect(await seriousAxeViolations(page, where)).toEqual([]);
  const jsonOf = async (label: string) => JSON.parse((await page.getByLabel(label, { exact: true }).textContent()) ?? 'null');

  beforeAll(async () => {
    ({ browser, page, pageErrors } = await openConsoleBrowser({ viewport: { width: 1400, height: 1000 } }));
    t = await startTestApp();
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'Shape orders',
        definition: {
          nodes: [
            { id: 'orders', type: 'webhook-trigger', parameters: {}, position: { x: 40, y: 200 } },
            { id: 'shape', type: 'set', parameters: { fields: { shaped: true } }, position: { x: 300, y: 200 } },
            { id: 'tag', type: 'set', parameters: { fields: { tagged: true } }, position: { x: 560, y: 200 } },
          ],
          edges: [
            { from: 'orders', to: 'shape' },
            { from: 'shape', to: 'tag' },
          ],
        },
      },
    });
    workflowId = created.body.id;
    await page.goto(`${t.url}/console`);
    await page.getByLabel('API key').fill(BOOTSTRAP_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(() => {
    expect(pageErrors).toEqual([]);
  });

  it('pins typed data on a node, tests it alone and with what follows, and draws each test on the canvas', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('shape').click();
    const panel = page.getByRole('group', { name: 'Test shape' });
    await panel.getByLabel('Test input (JSON)').fill('[{"order": 7}]');
    await panel.getByRole('button', { name: 'Pin this input' }).click();
    await node('shape').locator('.node-pinned').waitFor();
    expect(await jsonOf('Pinned data of shape')).toEqual([{ order: 7 }]);
    await axe('workflow with the test panel');

    // The test saves the draft (with its pinned data) first, then runs the node on it.
    await panel.getByRole('button', { name: 'Test this node' }).click();
    const result = page.getByRole('region', { name: 'Test result' });
    await result.locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    expect(await jsonOf('Test output of shape')).toEqual([{ order: 7, shaped: true }]);
    expect(await node('shape').getAttribute('class')).toContain('status-succeeded');
    expect(await node('tag').getAttribute('class')).not.toContain('status-');
    expect((await definition()).pinnedData).toEqual({ shape: [{ order: 7 }] });

    await page.getByRole('group', { name: 'Test shape' }).getByLabel('and what follows').check();
    await page.getByRole('group', { name: 'Test shape' }).getByRole('button', { name: 'Test this node' }).click();
    await node('tag').and(page.locator('.status-succeeded')).waitFor({ timeout: 60_000 });
    const edge = page.locator('.canvas-edges g[data-edge-index="1"]');
    expect(await edge.textContent()).toBe('1 item');
    expect(await edge.locator('path.edge').getAttribute('class')).toContain('edge-live');
    // The edge into the tested node carried nothing in the test: it is left as it is, not greyed.
    expect(await page.locator('.canvas-edges g[data-edge-index="0"] path.edge').getAttribute('class')).not.toContain('edge-');
    await shot('editor-node-test');
    const runs = (await t.request('GET', `/api/v1/runs?workflowId=${workflowId}`)).body.items;
    expect(runs[0]).toMatchObject({ trigger: 'node-test', runType: 'test' });
    const record = (await t.request('GET', `/api/v1/runs/${runs[0].id}`)).body;
    expect(record.nodeTest).toEqual({ nodeId: 'shape', andAfter: true });
    expect(record.steps.map((s: { nodeId: string }) => s.nodeId)).toEqual(['shape', 'tag']);

    // Its own page says what was tested, and leaves the nodes outside the test as they are.
    await page.getByRole('region', { name: 'Test result' }).getByRole('link', { name: 'open the run' }).click();
    await page.waitForURL(/\/console\/runs\/run_/);
    await page.getByText('shape and what follows').waitFor();
    await node('tag').and(page.locator('.status-succeeded')).waitFor();
    expect(await node('orders').getAttribute('class')).not.toContain('status-');
  });

  it("pins the last run's input, tests on typed input, and publishing leaves the pinned data out", async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('tag').click();
    const panel = page.getByRole('group', { name: 'Test tag' });
    await panel.getByRole('button', { name: "Pin the last run's input" }).click();
    expect(await jsonOf('Pinned data of tag')).toEqual([{ order: 7, shaped: true }]);
    await panel.getByLabel('Test input (JSON)').fill('{"typed": 1}');
    await panel.getByRole('button', { name: 'Test this node' }).click();
    await page.getByRole('region', { name: 'Test result' }).locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    expect(JSON.stringify(await jsonOf('Test output of tag'))).toContain('"typed":1');
    expect((await definition()).pinnedData).toEqual({ shape: [{ order: 7 }], tag: [{ order: 7, shaped: true }] });

    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Published as version 1' }).waitFor();
    expect((await t.request('GET', `/api/v1/workflows/${workflowId}/versions/1`)).body.definition.pinnedData).toBeUndefined();

    // Unpinned from the inspector, gone from the draft once saved.
    await node('tag').click();
    await page.getByRole('group', { name: 'Test tag' }).getByRole('button', { name: 'Unpin' }).click();
    expect(await node('tag').locator('.node-pinned').count()).toBe(0);
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    expect((await definition()).pinnedData).toEqual({ shape: [{ order: 7 }] });
  });

  it('sets retries and onError in the inspector: errorOutput adds an error port that connects, a refused setting is marked beside its field', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('tag').click();
    const settings = page.getByRole('group', { name: 'Settings of tag' });
    await settings.getByLabel('On error').selectOption('errorOutput');
    await node('tag').locator('[data-output-port="error"]').waitFor();
    await addNode('Add Edit Fields (Set) (set)', 'set', { x: 820, y: 330 });
    await connect('tag', 'error', 'set');
    expect(await page.locator('.canvas-edges [data-edge-index]').count()).toBe(3);

    await node('tag').click();
    await settings.getByLabel('Retry on fail').check();
    await settings.getByLabel('Max tries').fill('9');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('alert', { name: 'Refused by the server' }).waitFor();
    await node('tag').and(page.locator('.has-errors')).waitFor();
    expect(await settings.locator('.error-text').first().textContent()).toMatch(/maxTries|5/);

    await settings.getByLabel('Max tries').fill('4');
    await settings.getByLabel('Wait between tries (ms)').fill('500');
    await settings.getByLabel('Backoff').selectOption('exponential');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    const saved = await definition();
    expect(saved.nodes.find((n: { id: string }) => n.id === 'tag')).toMatchObject({
      onError: 'errorOutput',
      retryOnFail: true,
      maxTries: 4,
      waitBetweenTries: 500,
      backoff: 'exponential',
    });
    expect(saved.edges).toContainEqual({ from: 'tag', output: 'error', to: 'set' });
    await shot('editor-node-settings');
  });

  it('pans by dragging the background, and keeps the view where it was left when the page draws again', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('shape').waitFor();
    const before = (await node('shape').boundingBox())!;
    const canvas = (await page.locator('.canvas').boundingBox())!;
    // The top edge, above the nodes: the background.
    const from = { x: canvas.x + canvas.width / 2, y: canvas.y + 12 };
    await dragMouse(from, { x: from.x + 90, y: from.y + 40 });
    const panned = (await node('shape').boundingBox())!;
    expect(Math.round(panned.x - before.x)).toBe(90);
    expect(Math.round(panned.y - before.y)).toBe(40);
    // Selecting a node draws the canvas again: the view stays put.
    await node('shape').click();
    await page.getByRole('group', { name: 'Test shape' }).waitFor();
    const after = (await node('shape').boundingBox())!;
    expect({ x: Math.round(after.x), y: Math.round(after.y) }).toEqual({ x: Math.round(panned.x), y: Math.round(panned.y) });
  });

  it('creates, rotates and shares a credential on its page without ever showing its secret; a node chooses it from a dropdown', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Credentials' }).click();
    const form = page.getByRole('region', { name: 'New credential' });
    await form.getByLabel('Name').fill('Search API');
    await form.getByLabel('Type').selectOption('header');
    await form.getByLabel('Header name').fill('X-Api-Key');
    await form.getByLabel('Header value').fill(SECRET);
    await form.getByRole('button', { name: 'Create credential' }).click();
    const details = page.getByRole('region', { name: 'Credential Search API' });
    await details.waitFor();
    credentialId = (await t.request('GET', '/api/v1/credentials')).body.items[0].id;
    expect(await page.getByRole('table', { name: 'Credentials' }).textContent()).toContain('X-Api-Key');
    expect(await page.content()).not.toContain(SECRET);
    await axe('credentials');

    await details.getByRole('form', { name: 'Rotate' }).getByLabel('Header value').fill(ROTATED);
    await details.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Rotated' }).waitFor();
    const reader = await t.createUser('reader');
    await page.getByRole('region', { name: 'Credential Search API' }).getByLabel('User id').fill(reader.id);
    await page.getByRole('region', { name: 'Credential Search API' }).getByRole('button', { name: 'Share' }).click();
    await page.getByRole('table', { name: 'Members' }).getByRole('row').filter({ hasText: reader.id }).waitFor();
    expect(await page.content()).not.toContain(ROTATED);
    await shot('credentials');

    // In a node: the credential parameter is a dropdown of the credentials the user may use.
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await addNode('Add HTTP Request (http-request)', 'http_request', { x: 820, y: 120 });
    await connect('tag', 'main', 'http_request');
    await node('http_request').click();
    const parameters = page.getByRole('group', { name: 'Parameters of http_request' });
    await parameters.getByLabel('Method', { exact: true }).selectOption({ label: 'GET' });
    await parameters.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/search');
    const choice = parameters.getByLabel('Credential', { exact: true });
    await choice.locator('option', { hasText: 'Search API (header)' }).waitFor({ state: 'attached' });
    // Fixed only: a credential is never an expression.
    expect(await parameters.getByLabel('Credential mode').count()).toBe(0);
    await choice.selectOption({ label: 'Search API (header)' });
    await axe('workflow with a credential chosen');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    expect((await definition()).nodes.find((n: { id: string }) => n.id === 'http_request').parameters.credential).toBe(credentialId);
    expect(await page.content()).not.toContain(ROTATED);

    // Where it is used: the credential's page lists the workflow.
    await page.goto(`${t.url}/console/credentials?open=${credentialId}`);
    await page.getByRole('list', { name: 'Workflows that use it' }).getByRole('link', { name: 'Shape orders' }).waitFor();
  });

  it('fits the credentials page in 390 px without sideways scrolling, with no serious or critical axe violation', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.url}/console/credentials?open=${credentialId}`);
    await page.getByRole('region', { name: 'Credential Search API' }).waitFor();
    await page.waitForLoadState('networkidle');
    const wide = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    )) as { scroll: number; client: number };
    expect(wide.scroll).toBe(wide.client);
    await axe('credentials at 390 px');
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('shape').click();
    await page.getByRole('group', { name: 'Test shape' }).waitFor();
    const editor = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
    )) as { scroll: number; client: number };
    expect(editor.scroll).toBe(editor.client);
    await axe('workflow inspector at 390 px');
    await page.setViewportSize({ width: 1400, height: 1000 });
  });
});
