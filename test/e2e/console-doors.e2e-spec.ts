import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { canvasHands, openConsoleBrowser, SCREENSHOTS, seriousAxeViolations, signIn } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

jest.setTimeout(240_000);

const DOCS = join(__dirname, '..', '..', 'docs');

/**
 * Everything the API can do, through the console's doors, in a real browser against the real
 * app: API keys (create, list, revoke your own), users (admins), sharing and deleting collections
 * and workflows, file counts in the collections list, workflow settings and variables as forms;
 * then every new view at 390x844 without sideways scrolling, with no serious or critical axe
 * violation. `DOCS_SCREENSHOTS=1` writes the pictures of the docs again.
 */
describe('the console does what the API does', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  let workflowId: string;
  let collectionId: string;
  let otherUser: string;

  const shot = async (name: string, docs?: string) => {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
    if (docs && process.env.DOCS_SCREENSHOTS === '1') copyFileSync(join(SCREENSHOTS, `${name}.png`), join(DOCS, docs));
  };
  const axe = async (where: string) => expect(await seriousAxeViolations(page, where)).toEqual([]);
  const { node } = canvasHands(() => page);
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
  /** Accepts the next confirm() the page asks. */
  const confirmNext = () => page.once('dialog', (dialog) => void dialog.accept());

  beforeAll(async () => {
    ({ browser, page, pageErrors } = await openConsoleBrowser({ viewport: { width: 1280, height: 800 } }));
    t = await startTestApp();
    workflowId = (await t.request('POST', '/api/v1/workflows', { body: { name: 'Shared flow' } })).body.id;
    collectionId = (await t.request('POST', '/api/v1/collections', { body: { name: 'Handbooks' } })).body.id;
    await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
      body: { name: 'unreachable.pdf', url: 'http://127.0.0.1:9/unreachable.pdf' },
    });
    await signIn(page, t.url, BOOTSTRAP_KEY);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  afterEach(() => {
    expect(pageErrors).toEqual([]);
  });

  it('creates, lists and revokes your own API keys; the new key works once and is refused once revoked', async () => {
    await page.getByRole('link', { name: 'admin' }).click();
    await page.getByRole('heading', { name: 'Your account' }).waitFor();
    await page.getByLabel('Key name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByLabel('The key, shown once').textContent())!.trim();
    expect((await t.request('GET', '/api/v1/me', { key: secret })).status).toBe(200);
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: 'laptop' });
    await row.waitFor();
    await axe('account');
    await shot('account');
    confirmNext();
    await row.getByRole('button', { name: 'Revoke laptop' }).click();
    await row.getByText('revoked').waitFor();
    expect((await t.request('GET', '/api/v1/me', { key: secret })).status).toBe(401);
  });

  it('lets an admin create a user with a first key and list the users', async () => {
    await nav('Users').click();
    await page.getByLabel('Name', { exact: true }).fill('Grace');
    await page.getByRole('button', { name: 'Create user' }).click();
    const key = (await page.getByLabel('The key, shown once').textContent())!.trim();
    const me = await t.request('GET', '/api/v1/me', { key });
    expect(me.body).toMatchObject({ name: 'Grace', isAdmin: false });
    otherUser = me.body.id;
    await page.getByRole('table', { name: 'Users' }).getByRole('row').filter({ hasText: 'Grace' }).waitFor();
    await axe('users');
  });

  it('shares a workflow and a collection with that user, and shows file counts in the collections list', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    const sharing = page.getByRole('region', { name: 'Sharing' });
    await sharing.getByLabel('User id').fill(otherUser);
    await sharing.getByLabel('Role').selectOption('editor');
    await sharing.getByRole('button', { name: 'Share' }).click();
    await sharing.getByRole('table', { name: 'Members' }).getByRole('row').filter({ hasText: otherUser }).waitFor();
    const members = await t.request('GET', `/api/v1/workflows/${workflowId}/members`);
    expect(members.body.items).toContainEqual(expect.objectContaining({ userId: otherUser, role: 'editor' }));

    await page.goto(`${t.url}/console/collections/${collectionId}`);
    await page.getByRole('region', { name: 'Sharing' }).getByLabel('User id').fill(otherUser);
    await page.getByRole('region', { name: 'Sharing' }).getByRole('button', { name: 'Share' }).click();
    await page.getByRole('region', { name: 'Sharing' }).getByRole('row').filter({ hasText: otherUser }).waitFor();
    expect((await t.request('GET', `/api/v1/collections/${collectionId}/members`)).body.items).toContainEqual(
      expect.objectContaining({ userId: otherUser, role: 'viewer' }),
    );

    await page.getByRole('region', { name: 'Search playground' }).getByLabel('Search text').fill('onboarding');
    await shot('collection', 'console.png');
    await nav('Collections').click();
    const row = page.getByRole('table', { name: 'Collections' }).getByRole('row').filter({ hasText: 'Handbooks' });
    // One file, not indexed (its URL does not answer).
    await row.getByRole('cell', { name: /^1/ }).waitFor();
    await axe('collections with counts');
  });

  it('edits the settings and the variables of a workflow as forms', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    const settings = page.getByRole('form', { name: 'Workflow settings' });
    await settings.getByLabel('Runs at once').fill('2');
    await settings.getByLabel('Webhook calls per window').fill('10');
    await settings.getByLabel('Window (seconds)').fill('60');
    await settings.getByLabel('Keep step data of succeeded runs').selectOption('none');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved' }).waitFor();
    expect((await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.settings).toEqual({
      maxConcurrentRuns: 2,
      rateLimit: { requests: 10, perSeconds: 60 },
      stepData: { succeeded: 'none', failed: 'all' },
    });
    // A refused value is said, field by field.
    await settings.getByLabel('Runs at once').fill('0');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByRole('alert').filter({ hasText: 'maxConcurrentRuns' }).waitFor();
    await settings.getByLabel('Runs at once').fill('2');

    const variables = page.getByRole('group', { name: 'Variables' });
    await variables.getByRole('button', { name: 'Add variable' }).click();
    await variables.getByLabel('Variable 1 name').fill('rate');
    await variables.getByLabel('Variable 1 type').selectOption('number');
    await variables.getByLabel('Variable 1 value').fill('3');
    await variables.getByRole('button', { name: 'Add variable' }).click();
    await variables.getByLabel('Variable 2 name').fill('token');
    await variables.getByLabel('Variable 2 type').selectOption('secret');
    await variables.getByLabel('Variable 2 value').fill('s3cret-value');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    const variablesSaved = (await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.definition.variables;
    expect(variablesSaved).toEqual([
      { name: 'rate', type: 'number', value: 3 },
      { name: 'token', type: 'secret', value: null, set: true },
    ]);
    await axe('settings and variables');
  });

  it('deletes a workflow and a collection, asking first', async () => {
    await nav('Workflows').click();
    confirmNext();
    await page.getByRole('button', { name: 'Delete Shared flow' }).click();
    await page.getByRole('link', { name: 'Shared flow' }).waitFor({ state: 'detached' });
    expect((await t.request('GET', `/api/v1/workflows/${workflowId}`)).status).toBe(404);
    await page.goto(`${t.url}/console/collections/${collectionId}`);
    confirmNext();
    await page.getByRole('region', { name: 'Sharing' }).getByRole('button', { name: 'Delete collection' }).click();
    await page.getByRole('heading', { name: 'Collections', level: 1 }).waitFor();
    expect((await t.request('GET', `/api/v1/collections/${collectionId}`)).status).toBe(404);
  });

  it('fits the new views in 390x844 without sideways scrolling: header on one line, the search form readable, the editor and its node view', async () => {
    const flow = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'Phone',
        definition: {
          nodes: [
            { id: 'start', type: 'webhook-trigger', parameters: {} },
            { id: 'check', type: 'if', parameters: { condition: 'item.ok' }, parameterMode: { condition: 'expression' } },
          ],
          edges: [{ from: 'start', to: 'check' }],
        },
      },
    });
    const collection = await t.request('POST', '/api/v1/collections', { body: { name: 'Pocket' } });
    await page.setViewportSize({ width: 390, height: 844 });
    const wide = async (name: string) => {
      const size = (await page.evaluate(
        '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
      )) as {
        scroll: number;
        client: number;
      };
      expect({ name, ...size }).toEqual({ name, scroll: size.client, client: size.client });
    };
    const header = async () => {
      const box = (await page.locator('header.top').boundingBox())!;
      expect(box.height).toBeLessThan(60);
    };
    await page.goto(`${t.url}/console/collections/${collection.body.id}`);
    await page.getByRole('region', { name: 'Search playground' }).waitFor();
    await header();
    await wide('collection');
    const search = (await page.getByLabel('Search text').boundingBox())!;
    expect(search.width).toBeGreaterThan(300);
    await axe('collection at 390');
    await page.getByRole('button', { name: 'Menu' }).click();
    await nav('Workflows').waitFor();
    await axe('menu open at 390');
    await nav('Workflows').click();
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();

    await page.goto(`${t.url}/console/workflows/${flow.body.id}`);
    await node('check').waitFor();
    await header();
    await wide('workflow');
    await axe('workflow at 390');
    await shot('editor-390', 'editor-390x844.png');
    await node('check').dblclick();
    await page.getByRole('dialog', { name: 'Node check' }).waitFor();
    await wide('node view');
    await axe('node view at 390');
    await shot('node-view-390', 'node-view-390x844.png');
    await page.getByRole('dialog', { name: 'Node check' }).getByRole('button', { name: 'Close' }).click();
    for (const [path, heading] of [
      ['/console/account', 'Your account'],
      ['/console/users', 'Users'],
    ]) {
      await page.goto(t.url + path);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await wide(path);
      await axe(`${path} at 390`);
    }
  });

  it('tells a new user at sign-in where a first key comes from', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${t.url}/console`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    const text = (await page.getByRole('main').textContent()) ?? '';
    expect(text).toContain('BOOTSTRAP_API_KEY');
    expect(text).toContain('npm run cli -- user:create --name');
    expect(text).not.toContain('--user <id>');
    await axe('sign-in');
  });
});
