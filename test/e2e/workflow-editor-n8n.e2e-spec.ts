import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { canvasHands, openConsoleBrowser, SCREENSHOTS, seriousAxeViolations } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

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

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
  const definition = async () => (await t.request('GET', `/api/v1/workflows/${workflowId}`)).body.definition;
  const { node, middle, dragMouse } = canvasHands(() => page);
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
    t = await startTestApp();
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
    await page.locator('[data-add-after="check"][data-output="true"]').click();
    await pick('Add Edit Fields (Set) (set)');
    await node('set').waitFor();
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
    const plus = (await page.locator('.canvas-edges g[data-edge-index="0"] [data-edge-insert] circle').boundingBox())!;
    await page.mouse.move(plus.x + plus.width / 2, plus.y + plus.height / 2);
    await page.mouse.click(plus.x + plus.width / 2, plus.y + plus.height / 2);
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
    expect(
      await page
        .locator('.canvas-note-line')
        .textContent()
        .catch(() => ''),
    ).not.toContain('clipboard holds no nodes');
    // On the canvas the same keys copy the node selected in the same frame.
    await node('set_2').click();
    await page.keyboard.press('Control+c');
    const clip = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(JSON.parse(clip).nodes.map((n: { id: string }) => n.id)).toEqual(['set_2']);
    await name.fill('');
  });
});
