import { createHash, randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ConsoleBrowser, openConsoleBrowser, SCREENSHOTS, seriousAxeViolations } from '../utils/console-browser';
import { freePort } from '../utils/processes';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { rawMcp } from './mcp.helpers';

/**
 * The consent page in a real browser (chromium): a client sends the user to the authorization
 * endpoint, the console asks them to sign in with their API key, shows who asks for what, and the
 * user grants read-only access to one chosen collection; the browser arrives at the client's
 * redirect URI with a code that buys a token limited to exactly that.
 */
describe('OAuth consent in the web console', () => {
  let t: TestApp;
  let user: TestUser;
  let chosenId: string;
  let otherId: string;
  let browser: ConsoleBrowser;
  let page: Page;
  let callback: Server;
  let redirectUri: string;
  const arrived: URL[] = [];

  beforeAll(async () => {
    callback = createServer((req, res) => {
      arrived.push(new URL(req.url ?? '/', redirectUri));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('connected');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    const port = await freePort();
    t = await startTestApp({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` });
    user = await t.createUser('consenting-user');
    chosenId = (await t.request('POST', '/api/v1/collections', { key: user.key, body: { name: 'Shared notes' } })).body.id;
    otherId = (await t.request('POST', '/api/v1/collections', { key: user.key, body: { name: 'Private diary' } })).body.id;
    browser = await openConsoleBrowser({ viewport: { width: 1000, height: 800 } });
    page = browser.page;
    // The service, the console's build and chromium all start here: minutes on a machine shared at load 30.
  }, 180_000);

  afterAll(async () => {
    await browser?.browser.close();
    await t?.close();
    await new Promise((resolve) => callback?.close(resolve));
  });

  it('signs the user in, takes their choice, and sends the browser back to the client with a code', async () => {
    const registered = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Cursor', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${t.url}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'collections:read collections:write',
      resource: `${t.url}/mcp`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'from-cursor',
    }).toString();

    await page.goto(authorize.toString());
    await page.getByLabel('API key').fill(user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Connect Cursor' }).waitFor();
    expect(await seriousAxeViolations(page, 'consent page')).toEqual([]);
    // Read-only, and only the shared collection.
    await page.getByLabel(/Create collections and add or delete their files/).uncheck();
    await page.getByLabel('All my collections').uncheck();
    await page.getByLabel('Shared notes').check();
    await page.screenshot({ path: join(SCREENSHOTS, 'oauth-consent.png'), fullPage: true });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.toString().startsWith(redirectUri));
    expect(browser.pageErrors).toEqual([]);

    // The browser asks the client's origin for its icon too: the redirect is the visit of /callback.
    const back = arrived.find((url) => url.pathname === '/callback')!;
    expect(back.searchParams.get('error')).toBeNull();
    expect(back.searchParams.get('state')).toBe('from-cursor');
    const answered = await fetch(`${t.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: redirectUri,
        client_id: clientId,
        code_verifier: verifier,
        resource: `${t.url}/mcp`,
      }).toString(),
    });
    const token = (await answered.json()) as { access_token: string; scope: string };
    expect(answered.status).toBe(200);
    expect(token.scope).toBe('collections:read');

    const headers = { authorization: `Bearer ${token.access_token}` };
    const opened = await rawMcp(t.url, 'POST', headers, rawMcp.initializeBody);
    const call = (id: number, name: string, args: Record<string, unknown>) =>
      rawMcp(
        t.url,
        'POST',
        { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' },
        JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
      );
    const listed = await call(2, 'service_list_collections', {});
    expect(JSON.stringify(listed.body.result.structuredContent)).toContain(chosenId);
    expect(JSON.stringify(listed.body.result.structuredContent)).not.toContain(otherId);
    expect((await call(3, 'service_create_collection', { name: 'nope' })).status).toBe(403);
  });
});
