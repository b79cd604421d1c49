import { Client as V2Client, StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../utils/processes';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { rawMcp, readSseEvents, SseReader } from './mcp.helpers';

/** The cookies a browser keeps for the service, by name (paths do not matter here: each name is used on one path). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  get header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** A JSON answer, read as the loosely typed value a test inspects. */
const jsonOf = (response: Response): Promise<any> => response.json();

const challengeParam = (header: string | null, name: string): string | undefined => header?.match(new RegExp(`${name}="([^"]*)"`))?.[1];

/**
 * OAuth for remote MCP clients, scripted as Claude.ai runs it: the 401 names the resource
 * metadata, which names the authorization server; the client registers (dynamic registration),
 * sends the user's browser to the authorization endpoint with PKCE, the user signs in on the
 * console's consent page and chooses scopes, the client exchanges the code and calls /mcp with the
 * token through the SDK's v2 and v1 clients; then refresh, revocation (the open stream closes),
 * a token for another resource, and step-up when a call needs more than was granted.
 */
describe('OAuth for remote MCP clients', () => {
  let t: TestApp;
  let user: TestUser;
  let collectionId: string;
  let otherCollectionId: string;
  const redirectUri = 'http://127.0.0.1:1/callback';
  const tls = join(__dirname, '..', 'fixtures', 'tls');
  /** Where a client publishes its metadata document (CIMD): https on this machine, with the fixture certificate. */
  let documents: Server;
  let documentUrl: string;
  let documentFetches = 0;
  let env: Record<string, string>;
  /** Data directories of a service closed to be started again on them. */
  const keptDirs: string[] = [];

  beforeAll(async () => {
    documents = createServer(
      { key: readFileSync(join(tls, 'localhost.key')), cert: readFileSync(join(tls, 'localhost.crt')) },
      (req, res) => {
        documentFetches++;
        if (req.url !== '/claude-client.json') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            client_id: documentUrl,
            client_name: 'Claude (metadata document)',
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
          }),
        );
      },
    );
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentUrl = `https://127.0.0.1:${(documents.address() as AddressInfo).port}/claude-client.json`;
    const port = await freePort();
    env = {
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      // The document server is on this machine: the outbound guard lets it through, and trusts its certificate.
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      FETCH_CA_FILE: join(tls, 'localhost.crt'),
    };
    t = await startTestApp(env);
    user = await t.createUser('remote-client-user');
    const made = await t.request('POST', '/api/v1/collections', { key: user.key, body: { name: 'notes' } });
    expect(made.status).toBe(201);
    collectionId = made.body.id;
    otherCollectionId = (await t.request('POST', '/api/v1/collections', { key: user.key, body: { name: 'private' } })).body.id;
  });

  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => documents?.close(resolve));
    for (const dir of keptDirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Discovery as a client does it: the challenge of an unauthenticated request, then the two metadata documents. */
  async function discover() {
    const refused = await rawMcp(t.url, 'POST', {}, rawMcp.initializeBody);
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get('www-authenticate');
    const metadataUrl = challengeParam(challenge, 'resource_metadata');
    expect(metadataUrl).toBe(`${t.url}/.well-known/oauth-protected-resource/mcp`);
    const resource = await jsonOf(await fetch(metadataUrl!));
    expect(resource).toMatchObject({ resource: `${t.url}/mcp`, authorization_servers: [t.url] });
    expect(resource.scopes_supported).toEqual(['collections:read', 'collections:write', 'workflows:run']);
    const server = await jsonOf(await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`));
    expect(server.issuer).toBe(t.url);
    expect(server.code_challenge_methods_supported).toEqual(['S256']);
    expect(server).toMatchObject({
      authorization_endpoint: `${t.url}/oauth/authorize`,
      token_endpoint: `${t.url}/oauth/token`,
      registration_endpoint: `${t.url}/oauth/register`,
      revocation_endpoint: `${t.url}/oauth/revoke`,
    });
    return { resource, server };
  }

  async function register(server: any): Promise<string> {
    const registered = await fetch(server.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Claude',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    });
    const body = await jsonOf(registered);
    expect(registered.status).toBe(201);
    return body.client_id;
  }

  interface Consent {
    scopes: string[];
    collections?: string[];
    workflows?: string[];
  }

  /** The browser's part: authorization request, the consent page signed in with the user's key, back to the client with a code. */
  async function authorize(
    server: any,
    clientId: string,
    ask: { scope: string; resource: string },
    consent: Consent,
    clientName = 'Claude',
  ) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const state = randomBytes(8).toString('hex');
    const jar = new CookieJar();
    const url = new URL(server.authorization_endpoint);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: ask.scope,
      resource: ask.resource,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
    }))
      url.searchParams.set(name, value);
    const started = await fetch(url, { redirect: 'manual' });
    jar.take(started);
    expect(started.status).toBe(303);
    const consentPage = new URL(started.headers.get('location')!, t.url);
    expect(consentPage.pathname).toMatch(/^\/console\/oauth\/[\w-]+$/);
    const page = await fetch(consentPage, { headers: { cookie: jar.header } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');

    const details = await fetch(`${consentPage}/details`, { headers: { cookie: jar.header, 'x-api-key': user.key } });
    expect(details.status).toBe(200);
    const shown = await jsonOf(details);
    expect(shown.client.name).toBe(clientName);
    expect(shown.collections.map((c: any) => c.id)).toEqual(expect.arrayContaining([collectionId, otherCollectionId]));

    const decided = await fetch(`${consentPage}/decision`, {
      method: 'POST',
      headers: { cookie: jar.header, 'x-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({ allow: true, ...consent }),
    });
    jar.take(decided);
    expect(decided.status).toBe(200);
    let next = new URL((await jsonOf(decided)).redirectTo, t.url);
    // Back through the authorization endpoint, which sends the browser on to the client.
    for (let hops = 0; next.origin === t.url && hops < 5; hops++) {
      const answered = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header } });
      jar.take(answered);
      expect([302, 303]).toContain(answered.status);
      next = new URL(answered.headers.get('location')!, t.url);
    }
    expect(`${next.origin}${next.pathname}`).toBe(redirectUri);
    expect(next.searchParams.get('state')).toBe(state);
    const code = next.searchParams.get('code');
    expect(code).toBeTruthy();
    return { code: code!, verifier };
  }

  async function token(server: any, form: Record<string, string>) {
    const answered = await fetch(server.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: answered.status, body: await jsonOf(answered) };
  }

  async function connect(server: any, clientId: string, scope: string, consent: Consent, resource = `${t.url}/mcp`) {
    const { code, verifier } = await authorize(server, clientId, { scope, resource }, consent);
    const issued = await token(server, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    });
    expect(issued.status).toBe(200);
    return issued.body as { access_token: string; refresh_token: string; scope: string; token_type: string };
  }

  /** RFC 7009 revocation, as the client sends it. */
  async function revoke(server: any, value: string, clientId: string): Promise<void> {
    const revoked = await fetch(server.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: value, client_id: clientId }).toString(),
    });
    expect(revoked.status).toBe(200);
  }

  /** Whether the server ended the stream within `ms` (the bound the service promises for a revoked credential). */
  async function endsWithin(stream: SseReader, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        stream.ended.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
      ]);
    } finally {
      clearTimeout(timer);
      stream.close();
    }
  }

  /** One tools/call in a new 2025 session, as raw HTTP: what the transport answers is seen as it is. */
  async function callInSession(accessToken: string, name: string, args: Record<string, unknown>) {
    const headers = { authorization: `Bearer ${accessToken}` };
    const opened = await rawMcp(t.url, 'POST', headers, rawMcp.initializeBody);
    expect(opened.status).toBe(200);
    return rawMcp(
      t.url,
      'POST',
      { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }),
    );
  }

  it('runs the whole flow: discovery, registration, consent, code with PKCE, tools through the v2 and v1 clients, refresh', async () => {
    const { resource, server } = await discover();
    const clientId = await register(server);
    const granted = await connect(server, clientId, 'collections:read collections:write workflows:run', {
      scopes: ['collections:read', 'collections:write', 'workflows:run'],
    });
    expect(granted.token_type).toBe('Bearer');
    expect(granted.scope.split(' ').sort()).toEqual(['collections:read', 'collections:write', 'workflows:run']);
    expect(granted.refresh_token).toBeTruthy();
    // The store keeps hashes only: no token appears in it.
    expect(JSON.stringify(resource)).not.toContain(granted.access_token);

    const headers = { authorization: `Bearer ${granted.access_token}` };
    const v2 = new V2Client({ name: 'claude-ai-v2', version: '1.0.0' });
    await v2.connect(new V2HttpTransport(new URL('/mcp', t.url), { requestInit: { headers } }));
    const listed = await v2.callTool({ name: 'service_list_collections', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(JSON.stringify(listed.structuredContent)).toContain(collectionId);
    await v2.close();

    const v1 = new Client({ name: 'claude-ai-v1', version: '1.0.0' });
    await v1.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers } }));
    const made = await v1.callTool({ name: 'service_create_collection', arguments: { name: 'made over OAuth' } });
    expect(made.isError).toBeFalsy();
    // Acting as the user who consented: the collection is theirs.
    const mine = await t.request('GET', '/api/v1/collections', { key: user.key });
    expect(mine.body.items.map((c: any) => c.name)).toContain('made over OAuth');
    await v1.close();

    const refreshed = await token(server, { grant_type: 'refresh_token', refresh_token: granted.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).not.toBe(granted.access_token);
    const afterRefresh = await rawMcp(t.url, 'POST', { authorization: `Bearer ${refreshed.body.access_token}` }, rawMcp.initializeBody);
    expect(afterRefresh.status).toBe(200);
    // API keys keep working for headless clients.
    expect((await rawMcp(t.url, 'POST', { authorization: `Bearer ${user.key}` }, rawMcp.initializeBody)).status).toBe(200);
  });

  it('takes a client whose id is the URL of its metadata document, fetched through the outbound guard', async () => {
    const { server } = await discover();
    expect(server.client_id_metadata_document_supported).toBe(true);
    const { code, verifier } = await authorize(
      server,
      documentUrl,
      { scope: 'collections:read', resource: `${t.url}/mcp` },
      { scopes: ['collections:read'] },
      'Claude (metadata document)',
    );
    expect(documentFetches).toBeGreaterThan(0);
    const issued = await token(server, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: documentUrl,
      code_verifier: verifier,
      resource: `${t.url}/mcp`,
    });
    expect(issued.status).toBe(200);
    const listed = await rawMcp(t.url, 'POST', { authorization: `Bearer ${issued.body.access_token}` }, rawMcp.initializeBody);
    expect(listed.status).toBe(200);
    // A document on a private address the operator did not allow is never fetched.
    const url = new URL(server.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: 'https://10.0.0.7/client.json',
      redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const refused = await fetch(url, { redirect: 'manual' });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await jsonOf(refused))).toContain('invalid_client');
  });

  it('closes the open stream of a revoked token within 2 s, and refuses the token after', async () => {
    const { server } = await discover();
    const clientId = await register(server);
    const granted = await connect(server, clientId, 'collections:read', { scopes: ['collections:read'] }, `${t.url}/sse`);
    const stream = await readSseEvents(`${t.url}/sse`, { authorization: `Bearer ${granted.access_token}` });
    await stream.next('endpoint');
    await revoke(server, granted.access_token, clientId);
    expect(await endsWithin(stream, 2000)).toBe(true);
    const refused = await fetch(`${t.url}/sse`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${granted.access_token}` },
    });
    expect(refused.status).toBe(401);
    expect(challengeParam(refused.headers.get('www-authenticate'), 'error')).toBe('invalid_token');
  });

  it('closes a 2026-07-28 listen stream when the grant is revoked through its refresh token', async () => {
    const { server } = await discover();
    const clientId = await register(server);
    const granted = await connect(server, clientId, 'collections:read', { scopes: ['collections:read'] });
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'listener', version: '1.0.0' },
    };
    const stream = await readSseEvents(
      `${t.url}/mcp`,
      {
        authorization: `Bearer ${granted.access_token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      {
        method: 'POST',
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true }, _meta: meta },
        }),
      },
    );
    expect(await stream.next('message')).toContain('notifications/subscriptions/acknowledged');
    // Revoking the refresh token revokes the grant, and with it the access token the stream was opened with.
    await revoke(server, granted.refresh_token, clientId);
    expect(await endsWithin(stream, 2000)).toBe(true);
    expect((await rawMcp(t.url, 'POST', { authorization: `Bearer ${granted.access_token}` }, rawMcp.initializeBody)).status).toBe(401);
  });

  it('binds tokens to their resource: another audience is refused by the server and by /mcp', async () => {
    const { server } = await discover();
    const clientId = await register(server);
    // The authorization server issues tokens for this service's MCP endpoints only.
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(server.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'collections:read',
      resource: 'https://other.example/mcp',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const foreign = await fetch(url, { redirect: 'manual' });
    expect(new URL(foreign.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
    // A token for /sse is not one for /mcp.
    const forSse = await connect(server, clientId, 'collections:read', { scopes: ['collections:read'] }, `${t.url}/sse`);
    const refused = await rawMcp(t.url, 'POST', { authorization: `Bearer ${forSse.access_token}` }, rawMcp.initializeBody);
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.body)).toContain('another resource');
    // Without PKCE there is no code.
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'collections:read',
    }).toString();
    const noPkce = await fetch(url, { redirect: 'manual' });
    expect(new URL(noPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('limits a token to its scopes, with insufficient_scope step-up', async () => {
    const { server } = await discover();
    const clientId = await register(server);
    const readOnly = await connect(server, clientId, 'collections:read collections:write', {
      scopes: ['collections:read'],
      collections: [collectionId],
    });
    expect(readOnly.scope).toBe('collections:read');
    const headers = { authorization: `Bearer ${readOnly.access_token}` };
    const v2 = new V2Client({ name: 'scoped', version: '1.0.0' });
    await v2.connect(new V2HttpTransport(new URL('/mcp', t.url), { requestInit: { headers } }));
    // Only the chosen collection is listed; another is refused naming the scope.
    const listed = await v2.callTool({ name: 'service_list_collections', arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).toContain(collectionId);
    expect(JSON.stringify(listed.structuredContent)).not.toContain(otherCollectionId);
    const other = await v2.callTool({ name: 'service_get_collection', arguments: { collection_id: otherCollectionId } });
    expect(other.isError).toBe(true);
    expect(JSON.stringify(other.content)).toContain('INSUFFICIENT_SCOPE');
    expect(JSON.stringify(other.content)).toContain('collections:read');
    // Resources pass through the same check.
    await expect(v2.readResource({ uri: `collections://${otherCollectionId}` })).rejects.toThrow(/scope|INSUFFICIENT/i);
    await v2.close();

    // A write on HTTP: 403 with the scope to ask for, before anything runs.
    const write = await callInSession(readOnly.access_token, 'service_create_collection', { name: 'x' });
    expect(write.status).toBe(403);
    const challenge = write.headers.get('www-authenticate');
    expect(challengeParam(challenge, 'error')).toBe('insufficient_scope');
    expect(challengeParam(challenge, 'scope')).toBe('collections:write');
    expect(challengeParam(challenge, 'resource_metadata')).toBe(`${t.url}/.well-known/oauth-protected-resource/mcp`);

    // Step-up: the client asks again with the scope named, the user grants it, and the call goes through.
    const stepped = await connect(server, clientId, 'collections:read collections:write', {
      scopes: ['collections:read', 'collections:write'],
    });
    const again = await callInSession(stepped.access_token, 'service_create_collection', { name: 'after step-up' });
    expect(again.status).toBe(200);
    expect(again.body.result.isError).toBeFalsy();
  });

  it('refuses a consent with bad input, naming the field', async () => {
    const { server } = await discover();
    const clientId = await register(server);
    const url = new URL(server.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'collections:read',
      code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    const jar = new CookieJar();
    const started = await fetch(url, { redirect: 'manual' });
    jar.take(started);
    const consentPage = new URL(started.headers.get('location')!, t.url);
    const post = (body: unknown, key: string | null = user.key) =>
      fetch(`${consentPage}/decision`, {
        method: 'POST',
        headers: { cookie: jar.header, 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
        body: JSON.stringify(body),
      });
    expect((await post({ allow: true, scopes: ['collections:read'] }, null)).status).toBe(401);
    const unasked = await post({ allow: true, scopes: ['workflows:run'] });
    expect(unasked.status).toBe(400);
    expect(JSON.stringify(await jsonOf(unasked))).toContain('scopes');
    const foreign = await post({ allow: true, scopes: ['collections:read'], collections: ['col_does_not_exist'] });
    expect(foreign.status).toBe(400);
    expect(JSON.stringify(await jsonOf(foreign))).toContain('collections');
    // Without the browser's cookie the consent belongs to no request.
    const stranger = await fetch(`${consentPage}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': user.key },
      body: JSON.stringify({ allow: true, scopes: ['collections:read'] }),
    });
    expect(stranger.status).toBe(410);
    const denied = await post({ allow: false });
    expect(denied.status).toBe(200);
    const back = await fetch(new URL((await jsonOf(denied)).redirectTo, t.url), { redirect: 'manual', headers: { cookie: jar.header } });
    expect(new URL(back.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
  });
  it('gives each client address a share of registrations: past it 429 with Retry-After', async () => {
    const port = await freePort();
    const limited = await startTestApp({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, OAUTH_REGISTRATIONS_PER_HOUR: '2' });
    try {
      const registerAt = () =>
        fetch(`${limited.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'Flood', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
        });
      expect((await registerAt()).status).toBe(201);
      expect((await registerAt()).status).toBe(201);
      const refused = await registerAt();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await jsonOf(refused)).toMatchObject({
        error: 'temporarily_unavailable',
        error_description: expect.stringContaining('2 client registrations an hour'),
      });
      // The rest of the authorization server still answers that address.
      expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('keeps clients, grants and tokens across a restart (the store holds them)', async () => {
    const { server } = await discover();
    const clientId = await register(server);
    const granted = await connect(server, clientId, 'collections:read', { scopes: ['collections:read'], collections: [collectionId] });
    const dataDir = t.dataDir;
    keptDirs.push(dataDir);
    await t.app.close();
    // The same PUBLIC_URL (the issuer and the resource) and data; the listener on another port, as behind a proxy.
    const { PORT: _, ...sameAddress } = env;
    t = await startTestApp({ ...sameAddress, DATA_DIR: dataDir });
    const headers = { authorization: `Bearer ${granted.access_token}` };
    const v2 = new V2Client({ name: 'after-restart', version: '1.0.0' });
    await v2.connect(new V2HttpTransport(new URL('/mcp', t.url), { requestInit: { headers } }));
    const listed = await v2.callTool({ name: 'service_list_collections', arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).toContain(collectionId);
    expect(JSON.stringify(listed.structuredContent)).not.toContain(otherCollectionId);
    await v2.close();
    const refreshed = await token(
      { token_endpoint: `${t.url}/oauth/token` },
      { grant_type: 'refresh_token', refresh_token: granted.refresh_token, client_id: clientId },
    );
    expect(refreshed.status).toBe(200);
  });
});
