import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { fixturePath, SEARCH_FIXTURES } from '../fixtures/fixtures';
import { openConsoleBrowser, SCREENSHOTS } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

const VOLCANOES = SEARCH_FIXTURES.find((f) => f.file === 'volcanoes.pdf')!;
/** Indexing runs the local embedding model in a worker thread: seconds, more on a busy machine. */
const INDEXING_MS = 150_000;

jest.setTimeout(240_000);

/**
 * The web console in a real browser (Debian's chromium driven by playwright-core) against the real
 * app: sign in, create a collection, upload a file and watch it reach `indexed`, search it, write
 * and publish a workflow that searches it, start a test run and read a step's output and input.
 * Each page is written to test/e2e/screenshots/.
 */
describe('web console in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  let collectionId: string;
  let workflowId: string;
  let runId: string;

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const pathOf = () => new URL(page.url()).pathname;
  const activeVersionRow = (version: number) =>
    page
      .getByRole('table', { name: 'Versions' })
      .getByRole('row')
      .filter({ has: page.locator('.badge-active') })
      .filter({ has: page.getByRole('cell', { name: String(version), exact: true }) });

  /** The definition is typed in the editor's JSON tab; nodes are opened on the canvas. */
  const fillJson = async (definition: unknown) => {
    await page.getByRole('tab', { name: 'JSON' }).click();
    await page.getByLabel('Definition (JSON)').fill(JSON.stringify(definition));
  };
  const openNode = async (id: string) => {
    await page.getByRole('tab', { name: 'Canvas' }).click();
    await page.locator(`[data-node-id="${id}"]`).click();
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

  it('refuses a wrong key, then signs in and keeps the key in session storage', async () => {
    await page.goto(`${t.url}/console`);
    await page.getByLabel('API key').fill('wcs_not_a_key_0000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'UNAUTHENTICATED' }).waitFor();
    await shot('sign-in');

    await page.getByLabel('API key').fill(BOOTSTRAP_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    expect(await page.evaluate('sessionStorage.getItem("console.apiKey")')).toBe(BOOTSTRAP_KEY);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  });

  it('creates a collection', async () => {
    await page.getByLabel('Collection name').fill('Earth science');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('heading', { level: 1, name: 'Earth science' }).waitFor();
    collectionId = pathOf().split('/').pop()!;
    expect(collectionId).toMatch(/^col_/);
  });

  it('uploads a file and follows its status until it is indexed', async () => {
    await page.getByLabel('File to upload').setInputFiles(fixturePath(VOLCANOES.file));
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const row = page.getByRole('table', { name: 'Files' }).getByRole('row').filter({ hasText: VOLCANOES.file });
    await row.waitFor();
    // No reload: the page polls while a file is pending or processing.
    await row.locator('.badge', { hasText: 'indexed' }).waitFor({ timeout: INDEXING_MS });
    expect(await row.textContent()).toContain('application/pdf');
  });

  it("adds a file by URL, showing a refused field by name and a failed download as the file's error", async () => {
    await page.getByLabel('File name').fill('   ');
    await page.getByLabel('File URL').fill('http://127.0.0.1:9/report.pdf');
    await page.getByRole('button', { name: 'Add by URL' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'VALIDATION_FAILED' });
    await refused.waitFor();
    expect(await refused.locator('li').first().textContent()).toMatch(/^name /);

    // A private address is refused when the file is fetched, after it was accepted.
    await page.getByLabel('File name').fill('internal.pdf');
    await page.getByRole('button', { name: 'Add by URL' }).click();
    const row = page.getByRole('table', { name: 'Files' }).getByRole('row').filter({ hasText: 'internal.pdf' });
    await row.locator('.badge', { hasText: 'error' }).waitFor({ timeout: 60_000 });
    expect((await row.locator('.error-text').textContent())?.length).toBeGreaterThan(10);
    await page.getByLabel('Status filter').selectOption('error');
    await page.getByRole('table', { name: 'Files' }).getByRole('row').filter({ hasText: 'internal.pdf' }).waitFor();
    expect(await page.getByRole('table', { name: 'Files' }).getByRole('row').filter({ hasText: VOLCANOES.file }).count()).toBe(0);
    await page.getByLabel('Status filter').selectOption('');
  });

  it('searches the collection, showing passages with their distance and page', async () => {
    await page.getByLabel('Search text').fill(VOLCANOES.question);
    await page.getByLabel('Results (top_k)').fill('3');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const first = page.getByRole('list', { name: 'Search results' }).getByRole('listitem').first();
    await first.waitFor();
    const text = (await first.textContent()) ?? '';
    expect(text).toContain(VOLCANOES.expectedSnippet);
    expect(text).toMatch(/distance \d\.\d{4}/);
    expect(text).toMatch(/page \d+/);
    expect(text).toContain(VOLCANOES.file);
    await shot('collection');
  });

  it('lists the collections', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Collections' }).click();
    await page.getByRole('link', { name: 'Earth science' }).waitFor();
    await shot('collections');
  });

  it("creates a workflow, flags a definition that breaks the node schemas by node and parameter, and still sends it: the server's refusal is listed field by field", async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByLabel('Workflow name').fill('Ask about the earth');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ask about the earth' }).waitFor();
    workflowId = pathOf().split('/').pop()!;
    expect(workflowId).toMatch(/^wfl_/);
    const created = (await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.definition;

    await fillJson({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'search', type: 'search-collection', parameters: { collectionId, query: 'volcanoes', topK: 0, colour: 'red' } },
      ],
      edges: [{ from: 'trigger', to: 'search' }],
    });
    await openNode('search');
    const advice = page.getByRole('region', { name: 'Possible problems' });
    await advice.waitFor();
    const listed = (await advice.textContent()) ?? '';
    expect(listed).toContain('Node search');
    expect(listed).toContain('Parameter "topK": must be at least 1');
    expect(listed).toContain('Parameter "colour": is not a parameter of this node');
    // The form beside the JSON marks the same parameter.
    expect(await page.getByRole('group', { name: 'Parameters of search' }).textContent()).toContain('must be at least 1');

    await page.getByRole('button', { name: 'Save draft' }).click();
    const refused = page.getByRole('alert', { name: 'Refused by the server' });
    await refused.waitFor();
    const answered = (await refused.textContent()) ?? '';
    expect(answered).toContain('Node search');
    expect(answered).toContain('Parameter "topK"');
    expect(answered).toContain('Parameter "colour"');
    expect(await page.getByRole('group', { name: 'Parameters of search' }).locator('.error-text').count()).toBeGreaterThan(0);
    expect((await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.definition).toEqual(created);
    await shot('workflow-refused');
  });

  it('saves a definition its own check doubts when the server accepts it', async () => {
    // A console whose copy of the rules is stricter than the server's (here: at most 1 passage).
    await page.route('**/api/v1/node-types', async (route) => {
      const response = await route.fetch();
      const catalogue = await response.json();
      catalogue.items.find((type: { type: string }) => type.type === 'search-collection').parameters.properties.topK.maximum = 1;
      await route.fulfill({ response, json: catalogue });
    });
    try {
      await page.reload();
      await fillJson({
        nodes: [
          { id: 'trigger', type: 'webhook-trigger', parameters: {} },
          { id: 'search', type: 'search-collection', parameters: { collectionId, query: 'volcanoes', topK: 2 } },
        ],
        edges: [{ from: 'trigger', to: 'search' }],
      });
      await page.getByRole('region', { name: 'Possible problems' }).filter({ hasText: 'Parameter "topK": must be at most 1' }).waitFor();
      await page.getByRole('button', { name: 'Save draft' }).click();
      await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
      expect((await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.definition.nodes[1].parameters).toEqual({
        collectionId,
        query: 'volcanoes',
        topK: 2,
      });
    } finally {
      await page.unroute('**/api/v1/node-types');
    }
    await page.reload();
    await page.getByRole('tab', { name: 'JSON' }).waitFor();
  });

  it('edits parameters with the node form, the collection from a dropdown of the ones the user sees, then saves and publishes', async () => {
    await fillJson({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        {
          id: 'search',
          type: 'search-collection',
          parameters: { query: 'input.question', topK: 3 },
          parameterMode: { query: 'expression' },
        },
      ],
      edges: [{ from: 'trigger', to: 'search' }],
    });
    await openNode('search');
    const form = page.getByRole('group', { name: 'Parameters of search' });
    await page.getByRole('region', { name: 'Possible problems' }).filter({ hasText: 'Parameter "collectionId": is required' }).waitFor();

    // collectionId carries x-dynamic-options: its choices come from the options endpoint, for this user.
    const collections = form.getByLabel('Collection', { exact: true });
    await collections.locator('option', { hasText: 'Earth science' }).waitFor({ state: 'attached' });
    await collections.selectOption({ label: 'Earth science' });
    await form.getByLabel('Top K', { exact: true }).fill('2');
    await page.getByRole('tab', { name: 'JSON' }).click();
    const edited = JSON.parse(await page.getByLabel('Definition (JSON)').inputValue()).nodes[1];
    await openNode('search');
    expect(edited.parameters).toEqual({ collectionId, query: 'input.question', topK: 2 });
    expect(await form.getByLabel('Query mode').inputValue()).toBe('expression');
    expect(await page.getByRole('region', { name: 'Possible problems' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Save and publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published as version 1' }).waitFor();
    await activeVersionRow(1).waitFor();
    await shot('workflow');
  });

  it('publishes a second version and activates the first one again', async () => {
    await openNode('search');
    await page.getByRole('group', { name: 'Parameters of search' }).getByLabel('Top K', { exact: true }).fill('1');
    await page.getByRole('button', { name: 'Save and publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published as version 2' }).waitFor();
    await activeVersionRow(2).waitFor();

    await page.getByRole('button', { name: 'Activate version 1' }).click();
    await activeVersionRow(1).waitFor();
    expect(await page.locator('.badge-active').count()).toBe(1);
    const workflow = await t.request('GET', `/api/v1/workflows/${workflowId}`);
    expect(workflow.body).toMatchObject({ activeVersion: 1, latestVersion: 2 });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('link', { name: 'Ask about the earth' }).waitFor();
    await shot('workflows');
    await page.getByRole('link', { name: 'Ask about the earth' }).click();
    await page.getByLabel('Run input (JSON)').waitFor();
  });

  it("starts a test run and reads the search step's output and input on the run's timeline", async () => {
    await page.getByLabel('Run input (JSON)').fill(JSON.stringify({ question: VOLCANOES.question }));
    await page.getByRole('button', { name: 'Start test run' }).click();
    // The run is drawn on the canvas as it happens; its page is one link away.
    await page.getByRole('status', { name: 'Run on the canvas' }).getByRole('link', { name: 'open the run page' }).click();
    await page.waitForURL(/\/console\/runs\/run_/);
    runId = pathOf().split('/').pop()!;
    await page.getByRole('heading', { level: 1 }).locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });

    const step = page.getByRole('listitem', { name: 'Step search' });
    expect(await step.locator('.badge').textContent()).toBe('succeeded');
    const output = JSON.parse((await step.getByLabel('Output of search').textContent()) ?? 'null');
    // A test run executes the draft (Top K 1), not the active version 1 (Top K 2).
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ fileName: VOLCANOES.file, distance: expect.any(Number) });
    expect(output[0].content).toContain(VOLCANOES.expectedSnippet);

    await step.getByText('Input', { exact: true }).click();
    expect(JSON.parse((await step.getByLabel('Input of search').textContent()) ?? 'null')).toEqual({ question: VOLCANOES.question });
    await shot('run');
  });

  it('lists runs filtered by workflow and status', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.getByRole('link', { name: runId }).waitFor();
    await page.getByLabel('Workflow', { exact: true }).selectOption(workflowId);
    await page.getByLabel('Status', { exact: true }).selectOption('succeeded');
    await runs.getByRole('link', { name: runId }).waitFor();
    expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded');
    await shot('runs');
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.getByText('No runs match.').waitFor();
  });

  it('retries a finished run from its page', async () => {
    await page.goto(`${t.url}/console/runs/${runId}`);
    await page.getByRole('button', { name: 'Retry from the start' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/console/runs/') && !url.pathname.endsWith(runId));
    await page.getByRole('link', { name: runId }).waitFor();
    await page.getByRole('heading', { level: 1 }).locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
  });

  it('cancels a run that is still going', async () => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'Wait a while',
        definition: {
          nodes: [
            { id: 'trigger', type: 'webhook-trigger', parameters: {} },
            { id: 'pause', type: 'wait', parameters: { amount: 10, unit: 'minutes' } },
          ],
          edges: [{ from: 'trigger', to: 'pause' }],
        },
      },
    });
    expect(created.status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test' } });
    expect(started.status).toBe(202);
    await page.goto(`${t.url}/console/runs/${started.body.runId}`);
    await page.getByRole('heading', { level: 1 }).locator('.badge', { hasText: 'waiting' }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('heading', { level: 1 }).locator('.badge', { hasText: 'canceled' }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Retry from the failed node' }).waitFor();
  });

  it('shows Not found for a page whose id is a malformed escape, instead of a blank app', async () => {
    // In the app's history (the server itself refuses such a path with 400 before any page loads).
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
    await page.evaluate("history.pushState(null, '', '/console/runs/%E0'); dispatchEvent(new PopStateEvent('popstate'))");
    await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    expect(await page.locator('main code').textContent()).toBe('/runs/%E0');
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
  });

  it('signs out and forgets the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('sessionStorage.getItem("console.apiKey")')).toBeNull();
  });
});
