import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { canvasHands, openConsoleBrowser, SCREENSHOTS, seriousAxeViolations } from '../utils/console-browser';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

jest.setTimeout(240_000);

/**
 * The workflow canvas in a real browser against the real app: a branching workflow built with the
 * mouse alone (webhook -> if -> two set nodes -> merge), published, run from the console and drawn
 * with its skipped branch; the same editor by keyboard, its clipboard, undo and the server's
 * refusal marked on the node; every page at 390 px wide without sideways scrolling and with no
 * serious or critical axe-core violation.
 */
describe('workflow canvas in a browser', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];
  let workflowId: string;
  let runId: string;

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
  const definition = async (id = workflowId) => (await t.request('GET', `/api/v1/workflows/${id}`)).body.definition;

  const { node, middle, dragMouse, connect, addNode } = canvasHands(() => page);

  /** axe-core on the page as it is: serious and critical violations only (the brief's bar). */
  const axe = async (where: string) => expect(await seriousAxeViolations(page, where)).toEqual([]);

  beforeAll(async () => {
    // Copy and Paste use the system clipboard, as they would for a person.
    ({ browser, page, pageErrors } = await openConsoleBrowser({
      viewport: { width: 1400, height: 1000 },
      permissions: ['clipboard-read', 'clipboard-write'],
    }));
    t = await startTestApp();
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

  it('builds webhook -> if -> two set nodes -> merge with the mouse only', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByLabel('Workflow name').fill('Route orders');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('heading', { level: 1, name: 'Route orders' }).waitFor();
    workflowId = new URL(page.url()).pathname.split('/').pop()!;
    // A new workflow is a lone webhook trigger.
    const trigger = (await definition()).nodes[0].id as string;
    await node(trigger).waitFor();
    const canvasBox = (await page.locator('.canvas').boundingBox())!;
    await dragMouse(await middle(`[data-node-id="${trigger}"] .node-title`), { x: canvasBox.x + 110, y: canvasBox.y + 260 });

    await addNode('Add IF (if)', 'if', { x: 330, y: 260 });
    await addNode('Add Edit Fields (Set) (set)', 'set', { x: 560, y: 150 });
    await addNode('Add Edit Fields (Set) (set)', 'set_2', { x: 560, y: 370 });
    await addNode('Add Merge (merge)', 'merge', { x: 790, y: 260 });

    await connect(trigger, 'main', 'if');
    await connect('if', 'true', 'set');
    await connect('if', 'false', 'set_2');
    await connect('set', 'main', 'merge');
    await connect('set_2', 'main', 'merge');
    await shot('canvas-connected');
    expect(await page.locator('.canvas-edges [data-edge-index]').count()).toBe(5);

    // Parameters, in the side panel of the node clicked.
    await node('if').click();
    const condition = page.getByRole('group', { name: 'Parameters of if' });
    await condition.getByLabel('Condition mode').selectOption('expression');
    await condition.getByLabel('Condition', { exact: true }).fill('item.total > 100');
    for (const [id, route] of [
      ['set', 'manual review'],
      ['set_2', 'approved'],
    ]) {
      await node(id).click();
      const form = page.getByRole('group', { name: `Parameters of ${id}` });
      await form.getByRole('button', { name: 'Add fields entry' }).click();
      await form.getByLabel('Fields 1 name').fill('route');
      await form.getByLabel('Fields 1 value').fill(route);
    }
    await shot('canvas-built');

    await page.getByRole('button', { name: 'Save and publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published as version 1' }).waitFor();
    const saved = await definition();
    expect(saved.edges).toEqual([
      { from: trigger, to: 'if' },
      { from: 'if', output: 'true', to: 'set' },
      { from: 'if', output: 'false', to: 'set_2' },
      { from: 'set', to: 'merge' },
      { from: 'set_2', to: 'merge' },
    ]);
    expect(saved.nodes.find((n: { id: string }) => n.id === 'if')).toMatchObject({
      parameters: { condition: 'item.total > 100' },
      parameterMode: { condition: 'expression' },
    });
    expect(saved.nodes.find((n: { id: string }) => n.id === 'set_2').parameters).toEqual({ fields: { route: 'approved' } });
    // Where the user put the nodes is kept: set above set_2, the merge right of both.
    const at = Object.fromEntries(saved.nodes.map((n: { id: string; position: { x: number; y: number } }) => [n.id, n.position]));
    expect(at.set.y).toBeLessThan(at.set_2.y);
    expect(at.merge.x).toBeGreaterThan(at.set.x);
  });

  it('runs the published version from the console and draws the run, the branch not taken grey', async () => {
    const started: Record<string, string>[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith(`/api/v1/workflows/${workflowId}/runs`)) started.push(request.headers());
    });
    await page.getByLabel('Run input (JSON)').fill(JSON.stringify([{ total: 150 }]));
    await page.getByRole('button', { name: 'Run published version' }).click();
    // Drawn on the canvas as it happens; its page is one link away.
    const onCanvas = page.getByRole('status', { name: 'Run on the canvas' });
    await onCanvas.locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    await node('set_2').and(page.locator('.status-skipped')).waitFor();
    await onCanvas.getByRole('link', { name: 'open the run page' }).click();
    await page.waitForURL(/\/console\/runs\/run_/);
    runId = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('heading', { level: 1 }).locator('.badge', { hasText: 'succeeded' }).waitFor({ timeout: 60_000 });
    expect(started[0]?.['x-run-source']).toBe('console');
    expect((await t.request('GET', `/api/v1/runs/${runId}`)).body).toMatchObject({ runType: 'production', version: 1 });

    await node('set_2').and(page.locator('.status-skipped')).waitFor();
    expect(await node('set').getAttribute('class')).toContain('status-succeeded');
    expect(await node('merge').getAttribute('class')).toContain('status-succeeded');
    // Item counts on the edges (drawn in the definition's order); the edge into the skipped node is drawn as skipped.
    const edge = (index: number) => page.locator(`.canvas-edges g[data-edge-index="${index}"]`);
    expect(await edge(1).textContent()).toBe('1 item');
    expect(await edge(2).locator('path.edge').getAttribute('class')).toContain('edge-skipped');
    expect(await edge(1).locator('path.edge').getAttribute('class')).toContain('edge-live');

    // A node opens its step: input, output, attempts.
    await node('set').click();
    const details = page.getByRole('region', { name: 'Step details of set' });
    expect(JSON.parse((await details.getByLabel('Output of set (canvas)').textContent()) ?? 'null')).toEqual([
      { total: 150, route: 'manual review' },
    ]);
    expect(await details.textContent()).toContain('Attempts1');
    await shot('canvas-run');

    // The runs list: the workflow's name and the duration.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    const row = page.getByRole('table', { name: 'Runs' }).getByRole('row').filter({ hasText: runId });
    await row.waitFor();
    expect(await row.textContent()).toContain('Route orders');
    expect(await row.textContent()).toMatch(/\d+ ms|\d+\.\d+ s/);
  });

  it('marks the node and the field the server refuses, and opens that node', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await node('if').click();
    await page.getByRole('group', { name: 'Parameters of if' }).getByLabel('Condition', { exact: true }).fill('item.total >');
    // Another node is open when saving: the refusal opens the node it names.
    await node('merge').click();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('alert', { name: 'Refused by the server' }).waitFor();
    await node('if').and(page.locator('.has-errors')).waitFor();
    const field = page.getByRole('group', { name: 'Parameters of if' }).locator('.parameter.invalid');
    expect(await field.locator('.error-text').textContent()).toContain('syntax error');
    expect(await node('merge').getAttribute('class')).not.toContain('has-errors');
    await shot('canvas-refused');
  });

  it('completes and previews an expression against the latest run', async () => {
    const editor = page.getByRole('group', { name: 'Parameters of if' }).getByLabel('Condition', { exact: true });
    await editor.fill('');
    await editor.pressSequentially('item.to');
    const completions = page.getByRole('listbox', { name: 'Completions for Condition' });
    await completions.getByRole('option', { name: /^total/ }).waitFor();
    await editor.press('Enter');
    expect(await editor.inputValue()).toBe('item.total');
    await editor.pressSequentially(' * 2');
    const preview = page.getByLabel('Preview of Condition');
    await preview.filter({ hasText: '300' }).waitFor();
    expect(await preview.textContent()).toContain(runId);
  });

  it('edits by keyboard: select, move, connect, delete, undo and redo', async () => {
    await page.reload();
    await node('merge').waitFor();
    await page.getByRole('tab', { name: 'Canvas' }).focus();
    // Tab into the canvas and on to the merge node; Enter opens it.
    const merge = node('merge');
    await merge.focus();
    // Enter opens the node with its data; Escape brings the focus back to it on the canvas.
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Node merge' }).getByRole('group', { name: 'Parameters of merge' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Node merge' }).waitFor({ state: 'detached' });
    const before = (await definition()).nodes.find((n: { id: string }) => n.id === 'merge').position;
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Delete');
    await merge.waitFor({ state: 'detached' });
    expect(await page.locator('.canvas-edges [data-edge-index]').count()).toBe(3);
    await page.keyboard.press('Control+z');
    await merge.waitFor();
    expect(await page.locator('.canvas-edges [data-edge-index]').count()).toBe(5);
    await page.keyboard.press('Control+y');
    await merge.waitFor({ state: 'detached' });
    await page.keyboard.press('Control+z');
    await merge.waitFor();

    // Connect without a mouse: the side panel lists each output with the nodes it may lead to.
    await node('set_2').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Node set_2' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Node set_2' }).waitFor({ state: 'detached' });
    const connections = page.getByRole('group', { name: 'Connections of set_2' });
    await connections.getByLabel('Connect main to').selectOption('set');
    await connections.getByRole('button', { name: 'Connect', exact: true }).press('Enter');
    expect(await page.locator('.canvas-edges [data-edge-index]').count()).toBe(6);
    await connections.getByRole('button', { name: 'Remove the connection to set (main)' }).press('Enter');
    expect(await page.locator('.canvas-edges [data-edge-index]').count()).toBe(5);

    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved.' }).waitFor();
    const after = (await definition()).nodes.find((n: { id: string }) => n.id === 'merge').position;
    expect(after).toEqual({ x: before.x + 10, y: before.y + 20 });
  });

  it('copies nodes as JSON and pastes them into another workflow; duplicates in place', async () => {
    await node('set').click();
    await node('set_2').click({ modifiers: ['Shift'] });
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Copied 2 node(s) as JSON.' }).waitFor();

    const other = await t.request('POST', '/api/v1/workflows', { body: { name: 'Receiver' } });
    await page.goto(`${t.url}/console/workflows/${other.body.id}`);
    await page.locator('.canvas-node').first().waitFor();
    await page.getByRole('button', { name: 'Paste', exact: true }).click();
    await node('set').waitFor();
    await node('set_2').waitFor();
    await page.getByRole('button', { name: 'Duplicate', exact: true }).click();
    await node('set_3').waitFor();
    // Not saved: the pasted nodes wait for their connections (the server refuses unconnected nodes).
    await page.getByRole('tab', { name: 'JSON' }).click();
    const pasted = JSON.parse(await page.getByLabel('Definition (JSON)').inputValue());
    expect(pasted.nodes.map((n: { id: string }) => n.id)).toEqual(['trigger', 'set', 'set_2', 'set_3', 'set_4']);
    expect(pasted.nodes[2].parameters).toEqual({ fields: { route: 'approved' } });
    expect(pasted.nodes[4].parameters).toEqual({ fields: { route: 'approved' } });
  });

  it('keeps the JSON tab and the canvas the same definition, losslessly', async () => {
    await page.goto(`${t.url}/console/workflows/${workflowId}`);
    await page.getByRole('tab', { name: 'JSON' }).click();
    const text = await page.getByLabel('Definition (JSON)').inputValue();
    const shown = JSON.parse(text);
    const stored = await definition();
    expect(shown.nodes).toEqual(stored.nodes);
    expect(shown.edges).toEqual(stored.edges);
    // An edit on the canvas rewrites the JSON with every other field as it was.
    await page.getByRole('tab', { name: 'Canvas' }).click();
    await node('merge').click();
    await page.keyboard.press('ArrowUp');
    await page.getByRole('tab', { name: 'JSON' }).click();
    const edited = JSON.parse(await page.getByLabel('Definition (JSON)').inputValue());
    expect(edited.nodes.map((n: { position: unknown }) => ({ ...n, position: undefined }))).toEqual(
      stored.nodes.map((n: { position: unknown }) => ({ ...n, position: undefined })),
    );
    expect(edited.edges).toEqual(stored.edges);
    await page.getByRole('tab', { name: 'Canvas' }).click();
    await page.getByRole('button', { name: 'Undo' }).click();
    await page.getByRole('tab', { name: 'JSON' }).click();
    expect(await page.getByLabel('Definition (JSON)').inputValue()).toBe(text);
  });

  it('draws only the nodes near the view at zoom 1, and draws the far ones as a pan or the focus reaches them', async () => {
    // 60 nodes in a row, 15 000 px long at zoom 1: most of them far outside the view.
    const nodes = [{ id: 'n0', type: 'webhook-trigger', parameters: {}, position: { x: 0, y: 0 } }];
    for (let i = 1; i < 60; i++) nodes.push({ id: `n${i}`, type: 'set', parameters: {}, position: { x: i * 250, y: 0 } });
    const edges = nodes.slice(1).map((n, i) => ({ from: nodes[i].id, to: n.id }));
    const long = await t.request('POST', '/api/v1/workflows', { body: { name: 'Long', definition: { nodes, edges } } });
    await page.goto(`${t.url}/console/workflows/${long.body.id}`);
    await node('n59').waitFor();
    const zoom = async () => Number((await page.locator('.canvas-world').getAttribute('style'))!.match(/--k: ?([\d.]+)/)![1]);
    for (let i = 0; i < 40 && (await zoom()) < 0.9; i++) await page.getByRole('button', { name: 'Zoom in' }).click();
    expect(await zoom()).toBeGreaterThanOrEqual(0.9);
    const drawn = async (id: string) =>
      (await node(id).getAttribute('class'))!.split(' ').includes('canvas-node') &&
      !(await node(id).getAttribute('class'))!.includes('culled');
    const canvas = (await page.locator('.canvas').boundingBox())!;
    const inView = async (id: string) => {
      const box = (await node(id).boundingBox())!;
      return (
        box.x >= canvas.x &&
        box.x + box.width <= canvas.x + canvas.width &&
        box.y >= canvas.y &&
        box.y + box.height <= canvas.y + canvas.height
      );
    };
    // The far end is a placeholder: in the page (named, focusable) but not drawn.
    expect(await drawn('n59')).toBe(false);
    expect(await node('n59').getAttribute('aria-label')).toContain('n59');
    expect(await page.locator('.canvas-node.culled').count()).toBeGreaterThan(30);
    expect(await page.locator('.canvas-edges [data-edge-index]').count()).toBeLessThan(30);
    await axe('a long workflow at zoom 1, its far nodes placeholders');

    // Panned with the mouse towards it (on the background, clear of the row of nodes), it is drawn.
    const row = (await node('n0').boundingBox())!;
    const y = row.y - canvas.y > canvas.height / 2 ? canvas.y + 20 : canvas.y + canvas.height - 20;
    for (let i = 0; i < 60 && !((await drawn('n59')) && (await inView('n59'))); i++) {
      await dragMouse({ x: canvas.x + canvas.width - 300, y }, { x: canvas.x + 100, y });
    }
    expect(await drawn('n59')).toBe(true);
    expect(await inView('n59')).toBe(true);
    await node('n59').locator('.node-title', { hasText: 'n59' }).waitFor();
    expect(await node('n59').locator('[data-output-port]').count()).toBe(1);
    // What it left behind is no longer drawn, and comes back when the focus (Tab, a screen reader) goes there.
    expect(await drawn('n0')).toBe(false);
    await node('n0').focus();
    await node('n0').locator('.node-title', { hasText: 'n0' }).waitFor();
    expect(await drawn('n0')).toBe(true);
    expect(await inView('n0')).toBe(true);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.dataset.nodeId')).toBe('n1');
    expect(await drawn('n1')).toBe(true);
    // The view moved by its transform, not by scrolling the canvas (which would shift every pointer position).
    expect(await page.evaluate(`[document.querySelector('.canvas').scrollLeft, document.querySelector('.canvas').scrollTop]`)).toEqual([
      0, 0,
    ]);
  });

  it('fits every page in 390 px without sideways scrolling, with no serious or critical axe violation', async () => {
    // A collection whose file row carries long names and an error, the widest table there is.
    const collection = await t.request('POST', '/api/v1/collections', { body: { name: 'Quarterly reports of the northern region' } });
    await t.request('POST', `/api/v1/collections/${collection.body.id}/files`, {
      body: {
        name: 'a-rather-long-file-name-for-the-quarterly-report-2026.pdf',
        url: 'http://127.0.0.1:9/a-rather-long-file-name-for-the-quarterly-report-2026.pdf',
      },
    });
    const pages: [string, string, string][] = [
      ['collections', '/console/collections', 'Your collections'],
      ['collection', `/console/collections/${collection.body.id}`, 'Files'],
      ['workflows', '/console/workflows', 'Your workflows'],
      ['workflow', `/console/workflows/${workflowId}`, 'Definition'],
      ['runs', '/console/runs', 'Runs'],
      ['run', `/console/runs/${runId}`, 'Run on the workflow'],
    ];
    for (const width of [1400, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 });
      for (const [name, path, section] of pages) {
        await page.goto(t.url + path);
        await page.getByRole('region', { name: section }).first().waitFor();
        await page.waitForLoadState('networkidle');
        if (width === 390) {
          const wide = (await page.evaluate(
            '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
          )) as { scroll: number; client: number };
          expect({ page: name, ...wide }).toEqual({ page: name, scroll: wide.client, client: wide.client });
          await page.screenshot({ path: join(SCREENSHOTS, `narrow-${name}.png`), fullPage: true });
        }
        await axe(`${name} at ${width} px`);
        if (name === 'workflow') {
          await node('if').click();
          await axe(`${name} with a node open at ${width} px`);
          await page.getByRole('tab', { name: 'JSON' }).click();
          await axe(`${name} JSON tab at ${width} px`);
          await page.getByRole('tab', { name: 'Canvas' }).click();
          await page.getByRole('button', { name: 'Add node' }).click();
          await axe(`${name} catalogue at ${width} px`);
        }
      }
    }
    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.goto(`${t.url}/console`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await axe('sign-in');
  });
});
