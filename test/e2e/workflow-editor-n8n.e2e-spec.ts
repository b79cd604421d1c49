import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { canvasHands, openConsoleBrowser, SCREENSHOTS, seriousAxeViolations, signIn } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';
import { TestMcpServer } from '../utils/test-mcp-server';

jest.setTimeout(300_000);

const DOCS = join(__dirname, '..', '..', 'docs');

/**
 * What someone coming from n8n expects of the editor, in a real browser against the real app:
 * the clipboard left to text fields, nodes placed clear of others and followed by the view, the
 * refusal cleared as the field is fixed, the node view with its data and a field dragged into a
 * parameter, a run drawn as its steps land, `+` on both IF outputs, insert on an edge, rename,
 * disable (and the engine passing the input on), sticky notes, rubber-band selection, the right-
 * click menu, the diff of a version, and the API's other doors (sharing, deleting, settings,
 * variables, API keys, users). axe-core finds no serious or critical violation on any new view.
 */
describe('workflow editor as an n8n user expects it, in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  let workflowId: string;
  let mcp: TestMcpServer;

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
  const definition = async () => (await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.definition;
  const { node, dragMouse } = canvasHands(() => page);
  const axe = async (where: string) => expect(await seriousAxeViolations(page, where)).toEqual([]);
  const jsonTab = async () => {
    await page.getByRole('tab', { name: 'JSON' }).click();
    const value = JSON.parse(await page.getByLabel('Definition (JSON)').inputValue());
    await page.getByRole('tab', { name: 'Canvas' }).click();
    return value;
  };
  const boxOf = async (id: string) => (await node(id).boundingBox())!;
  const overlap = (a: { x: number; y: number; width: number; height: number }, b: typeof a) =>
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  /** Chooses a node type in the catalogue that is open. */
  const pick = async (label: string) =>
    page
      .getByRole('region', { name: /^Add a node/ })
      .getByRole('button', { name: label })
      .click();
  const save = async () => {
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
  };

  beforeAll(async () => {
    ({ browser, page, pageErrors } = await openConsoleBrowser({
      viewport: { width: 1280, height: 800 },
      permissions: ['clipboard-read', 'clipboard-write'],
    }));
    mcp = await TestMcpServer.start();
    // The MCP server of the tool dropdown's test listens on 127.0.0.1, which the operator allows here.
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'Orders',
        definition: {
          nodes: [
            { id: 'orders', type: 'webhook-trigger', parameters: {}, position: { x: 40, y: 200 } },
            {
              id: 'check',
              type: 'if',
              parameters: { condition: 'item.total > 100' },
              parameterMode: { condition: 'expression' },
              position: { x: 300, y: 200 },
            },
          ],
          edges: [{ from: 'orders', to: 'check' }],
        },
      },
    });
    workflowId = created.body.id;
    await signIn(page, t.url, BOOTSTRAP_KEY);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await mcp?.close();
  });
  afterEach(() => {
    expect(pageErrors).toEqual([]);
  });

  it('fills the window at 1280x800: toolbar, canvas and save and publish visible together, the side panel beside the canvas', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('check').waitFor();
    const canvas = (await page.locator('.canvas').boundingBox())!;
    const panel = (await page.getByRole('complementary', { name: 'Inspector' }).boundingBox())!;
    const publish = (await page.getByRole('button', { name: 'Publish', exact: true }).boundingBox())!;
    const add = (await page.getByRole('button', { name: 'Add node' }).boundingBox())!;
    expect(canvas.y + canvas.height).toBeLessThanOrEqual(800);
    expect(publish.y).toBeGreaterThanOrEqual(0);
    expect(add.y).toBeLessThan(canvas.y);
    expect(canvas.height).toBeGreaterThan(380);
    expect(panel.x).toBeGreaterThan(canvas.x + canvas.width - 1);
    await axe('editor at 1280x800');
    await shot('editor-1280');
    if (process.env.DOCS_SCREENSHOTS === '1') copyFileSync(join(SCREENSHOTS, 'editor-1280.png'), join(DOCS, 'editor-1280x800.png'));
  });

  it('adds a node on each IF output with its +, placed beside that output and clear of the others, the view following', async () => {
    await node('check').click();
    await node('check').hover();
    await page.locator('[data-add-after="check"][data-output="true"]').click();
    await pick('Add Edit Fields (Set) (set)');
    await node('set').waitFor();
    await node('check').hover();
    await page.locator('[data-add-after="check"][data-output="false"]').click();
    await pick('Add Edit Fields (Set) (set)');
    await node('set_2').waitFor();
    const saved = await jsonTab();
    expect(saved.edges).toEqual([
      { from: 'orders', to: 'check' },
      { from: 'check', output: 'true', to: 'set' },
      { from: 'check', output: 'false', to: 'set_2' },
    ]);
    const [ifBox, yes, no] = [await boxOf('check'), await boxOf('set'), await boxOf('set_2')];
    // Right of the IF (no edge hooks backwards), true above false, neither on another node, both in view.
    expect(yes.x).toBeGreaterThan(ifBox.x + ifBox.width);
    expect(no.x).toBeGreaterThan(ifBox.x + ifBox.width);
    expect(yes.y).toBeLessThan(no.y);
    expect(overlap(yes, no)).toBe(false);
    const canvas = (await page.locator('.canvas').boundingBox())!;
    for (const box of [yes, no]) expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width);
    await axe('editor with the catalogue used');
  });

  it('inserts a node on an edge, renames a node on the canvas (the id stays), and never lets pasted or duplicated nodes overlap', async () => {
    // The + at the middle of the edge orders -> check.
    // The edge orders -> check runs level between the two: the pointer on its middle shows its +.
    const [from, to] = [await boxOf('orders'), await boxOf('check')];
    await page.mouse.move((from.x + from.width + to.x) / 2, from.y + from.height / 2);
    await page.locator('[data-edge-insert="0"]').click();
    await pick('Add Edit Fields (Set) (set)');
    await node('set_3').waitFor();
    const edges = (await jsonTab()).edges;
    expect(edges).toContainEqual({ from: 'orders', to: 'set_3' });
    expect(edges).toContainEqual({ from: 'set_3', to: 'check' });
    expect(edges).not.toContainEqual({ from: 'orders', to: 'check' });

    await node('set_3').focus();
    await page.keyboard.press('F2');
    const field = page.getByRole('dialog', { name: 'Name of set_3' });
    await field.getByRole('textbox').fill('Shape orders');
    await field.getByRole('textbox').press('Enter');
    await node('set_3').locator('.node-title', { hasText: 'Shape orders' }).waitFor();
    expect((await jsonTab()).nodes.find((n: { id: string }) => n.id === 'set_3').name).toBe('Shape orders');

    await node('set').click();
    await page.getByRole('button', { name: 'Duplicate', exact: true }).click();
    await node('set_4').waitFor();
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Paste', exact: true }).click();
    await node('set_5').waitFor();
    const ids = ['orders', 'set_3', 'check', 'set', 'set_2', 'set_4', 'set_5'];
    const boxes = await Promise.all(ids.map(boxOf));
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++)
        expect({ pair: [ids[i], ids[j]], overlap: overlap(boxes[i], boxes[j]) }).toEqual({ pair: [ids[i], ids[j]], overlap: false });
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await node('set_4').click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await save();
  });

  it('keeps the clipboard keys of text fields their own: Ctrl+C and Ctrl+V in a side-panel field copy and paste text', async () => {
    await node('set').click();
    const name = page.getByRole('complementary', { name: 'Inspector' }).getByLabel('Name', { exact: true });
    await name.fill('route');
    await name.selectText();
    await page.keyboard.press('Control+c');
    await name.press('End');
    await page.keyboard.press('Control+v');
    expect(await name.inputValue()).toBe('routeroute');
    expect(await page.getByText('The clipboard holds no nodes').count()).toBe(0);
    await name.fill('');
    // On the canvas the same keys copy the node selected in the same frame (Space, then Ctrl+C at once).
    await node('set_2').focus();
    await page.keyboard.press('Space');
    await page.keyboard.press('Control+c');
    const clip = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(JSON.parse(clip).nodes.map((n: { id: string }) => n.id)).toEqual(['set_2']);
  });

  it('disables a node from its hover toolbar: drawn as disabled, and a run passes its input on without running it', async () => {
    await node('set').hover();
    await page.getByRole('button', { name: 'Disable set', exact: true }).click();
    await node('set').and(page.locator('.disabled')).waitFor();
    expect(await node('set').textContent()).toContain('disabled');
    await axe('editor with a disabled node');
    await page.getByLabel('Run input (JSON)').fill(JSON.stringify([{ total: 150 }]));
    await page.getByRole('button', { name: 'Test workflow' }).click();
    await page.getByRole('status', { name: 'Run on the canvas' }).locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    expect((await definition()).nodes.find((n: { id: string }) => n.id === 'set').disabled).toBe(true);
    await node('set').and(page.locator('.status-skipped')).waitFor();
    await node('set_2').and(page.locator('.status-skipped')).waitFor();
    // The item count reads beside its edge, clear of the IF's port names.
    const trueEdge = (await jsonTab()).edges.findIndex((e: { from: string; output?: string }) => e.from === 'check' && e.output === 'true');
    const label = (await page.locator(`.canvas-edges g[data-edge-index="${trueEdge}"] .edge-label`).boundingBox())!;
    for (const port of await node('check').locator('.port-name').all()) expect(overlap(label, (await port.boundingBox())!)).toBe(false);
    // The README's picture of a run on the canvas: `DOCS_SCREENSHOTS=1` writes it again after a change to the look.
    await page.mouse.move(5, 5);
    await shot('canvas-run');
    if (process.env.DOCS_SCREENSHOTS === '1') copyFileSync(join(SCREENSHOTS, 'canvas-run.png'), join(DOCS, 'workflow-canvas-run.png'));
    const runId = (await page.getByRole('status', { name: 'Run on the canvas' }).locator('code').textContent())!;
    const run = (await t.request('GET', `/api/v1/runs/${runId}`)).body;
    const step = run.steps.find((s: { nodeId: string }) => s.nodeId === 'set');
    expect(step).toMatchObject({ status: 'skipped', attempts: 0, output: [{ total: 150 }] });
    await node('set').hover();
    await page.getByRole('button', { name: 'Enable set', exact: true }).click();
    await node('set').and(page.locator(':not(.disabled)')).waitFor();
  });

  it('opens a node with its data beside its parameters, and a field dragged from the input becomes an expression', async () => {
    await node('set').dblclick();
    const view = page.getByRole('dialog', { name: 'Node set' });
    await view.waitFor();
    const input = view.getByRole('region', { name: 'Input of set' });
    await input.getByRole('table', { name: 'Input of set (table)' }).waitFor();
    await input.getByRole('button', { name: 'Schema' }).click();
    await input.getByRole('list', { name: 'Input of set (schema)' }).getByText('total').waitFor();
    await input.getByRole('button', { name: 'JSON' }).click();
    expect(JSON.parse((await input.getByLabel('Input of set (JSON)').textContent()) ?? 'null')).toEqual([{ total: 150 }]);
    await input.getByRole('button', { name: 'Table' }).click();
    await view.getByRole('region', { name: 'Output of set' }).getByRole('table').waitFor();
    await axe('node view');
    await shot('node-view');
    if (process.env.DOCS_SCREENSHOTS === '1') copyFileSync(join(SCREENSHOTS, 'node-view.png'), join(DOCS, 'node-view-1280x800.png'));

    // The column total, dragged onto the IF's condition, is read as item.total.
    await page.keyboard.press('Escape');
    await node('check').dblclick();
    const check = page.getByRole('dialog', { name: 'Node check' });
    await check.getByRole('table', { name: 'Input of check (table)' }).waitFor();
    await check.getByRole('group', { name: 'Parameters of check' }).getByLabel('Condition mode').selectOption('fixed');
    await check.locator('.data-key', { hasText: 'total' }).dragTo(check.locator('[data-parameter="condition"]'));
    const condition = check.getByRole('group', { name: 'Parameters of check' }).getByLabel('Condition', { exact: true });
    expect(await condition.inputValue()).toBe('item.total');
    expect(await check.getByRole('group', { name: 'Parameters of check' }).getByLabel('Condition mode').inputValue()).toBe('expression');
    await check.getByRole('button', { name: 'Close' }).click();
    await check.waitFor({ state: 'detached' });
  });

  it('adds a sticky note, writes it, moves it, and selects nodes with a rubber band; the right-click menu acts on what it was opened on', async () => {
    const canvas = (await page.locator('.canvas').boundingBox())!;
    await page.mouse.click(canvas.x + canvas.width / 2, canvas.y + 30, { button: 'right' });
    const menu = page.getByRole('menu', { name: 'Canvas' });
    await axe('canvas menu');
    await menu.getByRole('menuitem', { name: 'Add a sticky note here' }).click();
    const text = page.getByRole('dialog', { name: 'Sticky note text' }).getByRole('textbox');
    await text.fill('Orders over 100 go to review');
    await page.getByRole('dialog', { name: 'Sticky note text' }).getByRole('button', { name: 'Done' }).click();
    const note = page.getByRole('note', { name: /Orders over 100/ });
    await note.waitFor();
    const before = (await note.boundingBox())!;
    await dragMouse({ x: before.x + 30, y: before.y + 20 }, { x: before.x + 90, y: before.y + 40 });
    const moved = (await jsonTab()).notes[0];
    expect(moved).toMatchObject({ text: 'Orders over 100 go to review', width: 240, height: 120 });

    // Shift+drag around the IF and the two nodes after it.
    const boxes = await Promise.all(['check', 'set', 'set_2'].map(boxOf));
    const left = Math.min(...boxes.map((b) => b.x)) - 10;
    const top = Math.min(...boxes.map((b) => b.y)) - 10;
    const right = Math.max(...boxes.map((b) => b.x + b.width)) + 10;
    const bottom = Math.max(...boxes.map((b) => b.y + b.height)) + 10;
    await page.keyboard.down('Shift');
    await dragMouse({ x: left, y: top }, { x: right, y: bottom });
    await page.keyboard.up('Shift');
    for (const id of ['check', 'set', 'set_2']) expect(await node(id).getAttribute('aria-pressed')).toBe('true');
    expect(await node('orders').getAttribute('aria-pressed')).toBe('false');

    await node('set_2').click({ button: 'right' });
    await page.getByRole('menu', { name: 'Node set_2' }).getByRole('menuitem', { name: 'Disable' }).click();
    await node('set_2').and(page.locator('.disabled')).waitFor();
    await node('set_2').click({ button: 'right' });
    await page.getByRole('menu', { name: 'Node set_2' }).getByRole('menuitem', { name: 'Enable' }).click();
    await save();
    expect((await definition()).notes).toEqual([moved]);
    await shot('canvas-note');
  });

  it('draws a run live as its steps land: the waiting node first, then the rest', async () => {
    const live = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'Slow',
        definition: {
          nodes: [
            { id: 'start', type: 'webhook-trigger', parameters: {}, position: { x: 40, y: 100 } },
            { id: 'first', type: 'set', parameters: { fields: { a: 1 } }, position: { x: 300, y: 100 } },
            { id: 'pause', type: 'wait', parameters: { amount: 3, unit: 'seconds' }, position: { x: 560, y: 100 } },
            { id: 'last', type: 'set', parameters: { fields: { b: 2 } }, position: { x: 820, y: 100 } },
          ],
          edges: [
            { from: 'start', to: 'first' },
            { from: 'first', to: 'pause' },
            { from: 'pause', to: 'last' },
          ],
        },
      },
    });
    expect(live.status).toBe(201);
    await page.goto(`${t.url}/console/workflows/${live.body.id}`);
    await node('last').waitFor();
    await page.getByRole('button', { name: 'Test workflow' }).click();
    // While the wait holds the run, the nodes before it are drawn done and the last not yet.
    await node('first').and(page.locator('.status-succeeded')).waitFor({ timeout: 60_000 });
    expect(await node('last').getAttribute('class')).not.toContain('status-succeeded');
    await node('last').and(page.locator('.status-succeeded')).waitFor({ timeout: 60_000 });
    expect(await page.locator('.canvas-edges g[data-edge-index="2"]').textContent()).toBe('1 item');
    await page.getByRole('status', { name: 'Run on the canvas' }).locator('.badge', { hasText: 'succeeded' }).waitFor();
    await axe('a run drawn live');
  });

  it('clears the red marks once the refused field is typed back, and never runs a draft the server refused', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('check').click();
    const condition = page.getByRole('complementary', { name: 'Inspector' }).getByLabel('Condition', { exact: true });
    const saved = await condition.inputValue();
    await condition.fill('item.total >');
    const runs = (await t.request('GET', `/api/v1/runs?workflowId=${workflowId}&limit=100`)).body.total;
    // A test run saves first: refused, it does not start.
    await page.getByRole('button', { name: 'Test workflow' }).click();
    await page.getByRole('alert', { name: 'Refused by the server' }).waitFor();
    await node('check').and(page.locator('.has-errors')).waitFor();
    expect((await t.request('GET', `/api/v1/runs?workflowId=${workflowId}&limit=100`)).body.total).toBe(runs);
    // One message, in plain words, not a second amber copy of it.
    expect(await page.getByRole('region', { name: 'Possible problems' }).count()).toBe(0);
    expect(await page.getByRole('alert', { name: 'Refused by the server' }).textContent()).toContain(
      'Parameter "condition": the expression has a syntax error',
    );
    await axe('a refusal');
    await condition.fill(saved);
    await page.getByRole('alert', { name: 'Refused by the server' }).waitFor({ state: 'detached' });
    expect(await node('check').getAttribute('class')).not.toContain('has-errors');
  });

  it('asks before leaving with unsaved changes, by a link or by Back', async () => {
    await node('check').click();
    await page.getByRole('complementary', { name: 'Inspector' }).getByLabel('Name', { exact: true }).fill('Big orders');
    const questions: string[] = [];
    const answer = (accept: boolean) =>
      page.once('dialog', (dialog) => {
        questions.push(dialog.message());
        void (accept ? dialog.accept() : dialog.dismiss());
      });
    answer(false);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    await page.waitForFunction(() => true);
    expect(questions).toEqual(['This workflow has unsaved changes: leave and lose them?']);
    expect(new URL(page.url()).pathname).toBe(`/console/workflows/${workflowId}`);
    await node('check').locator('.node-title', { hasText: 'Big orders' }).waitFor();
    await save();
    // Saved: nothing to lose, nothing asked.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL(/\/console\/runs$/);
    expect(questions).toHaveLength(1);
    // Back, within the console: refused, the address stays the editor's; accepted, it goes back.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('link', { name: 'Orders' }).click();
    await node('check').click();
    await page.getByRole('complementary', { name: 'Inspector' }).getByLabel('Name', { exact: true }).fill('Huge orders');
    answer(false);
    await page.evaluate('history.back()');
    for (const until = Date.now() + 20_000; questions.length < 2 && Date.now() < until;) await page.waitForTimeout(50);
    expect(questions).toHaveLength(2);
    // The dialog is answered asynchronously: the page puts its address back once confirm() returns.
    await page.waitForURL((url) => url.pathname === `/console/workflows/${workflowId}`);
    await node('check').locator('.node-title', { hasText: 'Huge orders' }).waitFor();
    answer(true);
    await page.evaluate('history.back()');
    await page.waitForURL(/\/console\/workflows$/);
    await page.getByRole('link', { name: 'Orders' }).click();
    await node('check').locator('.node-title', { hasText: 'Big orders' }).waitFor();
  });

  it('asks before a reload or closing the tab with unsaved changes, and keeps them when the user stays', async () => {
    // A second tab of the same signed-in browser, so the suite's own page stays as it is.
    const other = await page.context().newPage();
    try {
      // The console keeps its key per tab (sessionStorage): the new tab signs in as a new tab would.
      await signIn(other, t.url, BOOTSTRAP_KEY);
      await other.goto(`${t.url}/console/workflows/${workflowId}`);
      const { node: otherNode } = canvasHands(() => other);
      await otherNode('check').click();
      await other.getByRole('complementary', { name: 'Inspector' }).getByLabel('Name', { exact: true }).fill('Kept orders');
      const asked: string[] = [];
      other.on('dialog', (dialog) => {
        asked.push(dialog.type());
        void dialog.dismiss();
      });
      // Reload, refused: the page and its unsaved name stay.
      void other.reload().catch(() => undefined);
      for (const until = Date.now() + 20_000; asked.length < 1 && Date.now() < until;) await page.waitForTimeout(50);
      expect(asked).toEqual(['beforeunload']);
      await otherNode('check').locator('.node-title', { hasText: 'Kept orders' }).waitFor();
      // Closing the tab, refused: the tab stays open with the change.
      await other.close({ runBeforeUnload: true });
      for (const until = Date.now() + 20_000; asked.length < 2 && Date.now() < until;) await page.waitForTimeout(50);
      expect(asked).toEqual(['beforeunload', 'beforeunload']);
      expect(other.isClosed()).toBe(false);
      await otherNode('check').locator('.node-title', { hasText: 'Kept orders' }).waitFor();
    } finally {
      other.removeAllListeners('dialog');
      await other.close();
    }
  });

  it('compares the draft with a version (nodes added, removed, parameters changed) and restores the version into the draft', async () => {
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Published as version 1' }).waitFor();
    await node('set_2').click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await node('check').click();
    const condition = page.getByRole('complementary', { name: 'Inspector' }).getByLabel('Condition', { exact: true });
    await condition.fill('item.total > 500');
    await node('set').click();
    await node('set').hover();
    await page.locator('[data-add-after="set"][data-output="main"]').click();
    await pick('Add Merge (merge)');
    await node('merge').waitFor();
    await page.getByRole('button', { name: 'Compare with draft: version 1' }).click();
    const diff = page.getByRole('region', { name: 'Draft compared with version 1' });
    await diff.waitFor();
    const text = (await diff.textContent()) ?? '';
    expect(text).toContain('Nodes added: merge');
    expect(text).toContain('Nodes removed: set_2');
    // The condition as the field dragged earlier wrote it, and as it is now.
    expect(text).toContain('parameters.condition: "item.total" → "item.total > 500"');
    expect(text).toContain('Connections removed: check (false) → set_2');
    await axe('versions compared');
    await shot('versions-diff');
    await page.getByRole('button', { name: 'Restore version 1 into the draft' }).click();
    await node('set_2').waitFor();
    await node('merge').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Compare with draft: version 1' }).click();
    await page.getByRole('button', { name: 'Compare with draft: version 1' }).click();
    await diff.getByText('No difference').waitFor();
    // The saved draft was version 1: restored, there is nothing left to save.
    expect(await page.getByRole('button', { name: 'Save draft' }).isDisabled()).toBe(true);
    await node('check').click();
    expect(await condition.inputValue()).toBe('item.total');
  });

  it('previews an expression against the latest run that reached the node, even when a node test of another node came after', async () => {
    await node('set').click();
    await page.getByRole('group', { name: 'Test set' }).getByLabel('Test input (JSON)').fill('[{"total": 7}]');
    await page.getByRole('group', { name: 'Test set' }).getByRole('button', { name: 'Test this node' }).click();
    await page.getByRole('region', { name: 'Test result' }).locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    const nodeTest = (await page.getByRole('status', { name: 'Run on the canvas' }).locator('code').textContent())!;
    await page.reload();
    await node('check').click();
    // The newest run is the test of set, which did not reach check: the preview reads the run before it (total 150).
    const preview = page.getByRole('complementary', { name: 'Inspector' }).getByLabel('Preview of Condition');
    await preview.filter({ hasText: '150' }).waitFor();
    expect(await preview.textContent()).not.toContain(nodeTest);
    expect(await preview.textContent()).not.toContain('Cannot read properties');
  });

  it("lists an MCP server's tools in the mcp-client node's dropdown: the node's other parameters go with the question", async () => {
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'Tools',
        definition: {
          nodes: [
            { id: 'start', type: 'webhook-trigger', parameters: {}, position: { x: 40, y: 100 } },
            { id: 'call', type: 'mcp-client', parameters: { url: mcp.url, tool: 'echo' }, position: { x: 300, y: 100 } },
          ],
          edges: [{ from: 'start', to: 'call' }],
        },
      },
    });
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/parameters/tool/options')) asked.push(request.url());
    });
    await page.goto(`${t.url}/console/workflows/${created.body.id}`);
    await node('call').click();
    const tool = page.getByRole('group', { name: 'Parameters of call' }).getByLabel('Tool', { exact: true });
    await tool.locator('option', { hasText: 'add' }).waitFor({ state: 'attached' });
    expect(await tool.locator('option').allTextContents()).toEqual(expect.arrayContaining(['add', 'echo', 'fail', 'whoami']));
    expect(decodeURIComponent(asked[0])).toContain(`"url":"${mcp.url}"`);
  });

  it('zoomed far out, a large workflow fits and every node shows its name or stays a coloured summary, never a blank box', async () => {
    const nodes = [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }];
    const edges: { from: string; to: string }[] = [];
    for (let i = 1; i < 150; i++) {
      nodes.push({ id: `n${i}`, type: 'set', parameters: {} } as (typeof nodes)[number]);
      edges.push({ from: i === 1 ? 'trigger' : `n${Math.floor(i / 2) || 1}`, to: `n${i}` });
    }
    const big = await t.request('POST', '/api/v1/workflows', {
      body: { name: 'Big', definition: { nodes, edges: edges.filter((e) => e.from !== e.to) } },
    });
    await page.goto(`${t.url}/console/workflows/${big.body.id}`);
    await node('n149').waitFor();
    await page.locator('.canvas.far').waitFor();
    // Fitted: every node inside the canvas.
    const canvas = (await page.locator('.canvas').boundingBox())!;
    for (const id of ['trigger', 'n1', 'n75', 'n149']) {
      const box = await boxOf(id);
      expect(box.x).toBeGreaterThanOrEqual(canvas.x - 1);
      expect(box.y + box.height).toBeLessThanOrEqual(canvas.y + canvas.height + 1);
    }
    // The minimap's corner is kept clear of the fitted nodes; the zoom buttons are beside the canvas, not on it.
    const minimap = (await page.locator('.minimap').boundingBox())!;
    for (const id of ['trigger', 'n1', 'n75', 'n149']) expect(overlap(await boxOf(id), minimap)).toBe(false);
    expect((await page.getByRole('button', { name: 'Zoom in' }).boundingBox())!.y).toBeLessThan(canvas.y);
    // Names at a readable size (12 px on screen) where they fit, and none covering another.
    const labels = (await page.evaluate(`[...document.querySelectorAll('.canvas-node > .node-far')]
      .filter((l) => getComputedStyle(l).display !== 'none')
      .map((l) => { const r = l.getBoundingClientRect(); return { text: l.textContent, height: r.height, x: r.x, y: r.y, w: r.width }; })`)) as {
      text: string;
      height: number;
      x: number;
      y: number;
      w: number;
    }[];
    expect(labels.length).toBeGreaterThan(20);
    for (const label of labels) expect(label.height).toBeGreaterThanOrEqual(14);
    await axe('a large workflow fitted');
    await shot('canvas-far');
  });

  it('adds a node where a dragged connection is dropped on empty space, tests a step from the hover toolbar, loads an earlier run onto the canvas, and goes full screen', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('set').waitFor();
    const port = (await node('set').locator('[data-output-port="main"]').boundingBox())!;
    const canvas = (await page.locator('.canvas').boundingBox())!;
    const drop = { x: Math.min(port.x + 160, canvas.x + canvas.width - 40), y: port.y + 90 };
    await dragMouse({ x: port.x + port.width / 2, y: port.y + port.height / 2 }, drop);
    await page.getByRole('heading', { name: 'Add a node after set' }).waitFor();
    await pick('Add Merge (merge)');
    await node('merge').waitFor();
    expect((await jsonTab()).edges).toContainEqual({ from: 'set', to: 'merge' });
    // At the drop, or the nearest place clear of the other nodes.
    const merge = await boxOf('merge');
    expect(merge.x).toBeGreaterThan((await boxOf('set')).x);
    for (const id of ['orders', 'set_3', 'check', 'set', 'set_2']) expect(overlap(merge, await boxOf(id))).toBe(false);

    await node('set').hover();
    await page.getByRole('button', { name: 'Test this step set', exact: true }).click();
    const onCanvas = page.getByRole('status', { name: 'Run on the canvas' });
    await onCanvas.filter({ hasText: 'node test of set' }).locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    await node('set').and(page.locator('.status-succeeded')).waitFor();

    // Debug in editor: an earlier run, loaded from the list, is drawn instead.
    const picker = page.getByLabel('Show a run');
    const earlier = await picker
      .locator('option')
      .filter({ hasText: 'test ·' })
      .filter({ hasNotText: 'node test' })
      .first()
      .getAttribute('value');
    await picker.selectOption(earlier!);
    await onCanvas.filter({ hasText: earlier! }).waitFor();
    await node('check').and(page.locator('.status-succeeded')).waitFor();
    await picker.selectOption('');
    await onCanvas.waitFor({ state: 'detached' });
    expect(await node('check').getAttribute('class')).not.toContain('status-');

    const before = (await page.locator('.canvas').boundingBox())!;
    await page.getByRole('button', { name: 'Full screen' }).click();
    const after = (await page.locator('.canvas').boundingBox())!;
    expect(after.height).toBeGreaterThan(before.height);
    expect(after.y).toBeLessThan(before.y);
    await axe('full screen');
    await page.getByRole('button', { name: 'Exit full screen' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
  });
});
