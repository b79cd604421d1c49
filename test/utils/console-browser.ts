import { source as axeSource } from 'axe-core';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContextOptions, chromium, Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console';

export const CHROMIUM = '/usr/bin/chromium';
/** Where the browser suites write a screenshot of each page they check. */
export const SCREENSHOTS = join(__dirname, '..', 'e2e', 'screenshots');

export interface ConsoleBrowser {
  browser: Browser;
  page: Page;
  /** Uncaught errors and Content-Security-Policy refusals of the page: suites expect none. */
  pageErrors: string[];
}

/**
 * Builds the console and opens Debian's chromium on a blank page (playwright-core, no browser
 * download). Fails, saying how to install it, when chromium is missing: the suites never skip.
 */
export async function openConsoleBrowser(context: BrowserContextOptions): Promise<ConsoleBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: install it with "apt-get install -y chromium" (.ci/run does) to run the browser tests`,
    );
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  await buildConsole();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const page = await (await browser.newContext(context)).newPage();
  page.setDefaultTimeout(20_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // A Content-Security-Policy refusal is only a console message: it would otherwise pass unseen.
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) pageErrors.push(message.text());
  });
  return { browser, page, pageErrors };
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it stands, each as one readable line
 * naming `where`. Evaluated by the driver, not injected as a <script>: the console's CSP rightly
 * refuses inline scripts.
 */
export async function seriousAxeViolations(page: Page, where: string): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)",
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A point on the page. */
export interface Point {
  x: number;
  y: number;
}

/**
 * What a hand does on the workflow canvas, with the mouse only. `page` is read at each call, so a
 * suite may open its browser later (in beforeAll).
 */
export function canvasHands(page: () => Page) {
  const node = (id: string) => page().locator(`[data-node-id="${id}"]`);
  /** The middle of an element, in page coordinates. */
  const middle = async (selector: string): Promise<Point> => {
    const box = (await page().locator(selector).boundingBox())!;
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  };
  /** Presses the mouse on one point and lets it go on another, in small steps, as a hand would. */
  const dragMouse = async (from: Point, to: Point) => {
    const mouse = page().mouse;
    await mouse.move(from.x, from.y);
    await mouse.down();
    await mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 5 });
    await mouse.move(to.x, to.y, { steps: 5 });
    await mouse.up();
  };
  /** Drags a node's output port onto another node. */
  const connect = async (from: string, output: string, to: string) => {
    await dragMouse(await middle(`[data-node-id="${from}"] [data-output-port="${output}"]`), await middle(`[data-node-id="${to}"]`));
  };
  /** Adds a node with the catalogue, nothing selected (so it is connected to nothing), and drags it to `to` (canvas coordinates). */
  const addNode = async (label: string, id: string, to: Point) => {
    const canvas = (await page().locator('.canvas').boundingBox())!;
    await page().mouse.click(canvas.x + 8, canvas.y + 8);
    await page().getByRole('button', { name: 'Add node' }).click();
    await page()
      .getByRole('region', { name: /^Add a node/ })
      .getByRole('button', { name: label })
      .click();
    await node(id).waitFor();
    await dragMouse(await middle(`[data-node-id="${id}"] .node-title`), { x: canvas.x + to.x, y: canvas.y + to.y });
  };
  return { node, middle, dragMouse, connect, addNode };
}

/** Signs in on the console at `url` with `key`, as a person would, and waits for the main navigation. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/console`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}
