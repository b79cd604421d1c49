import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastUserText, ScriptedAgentLlm } from '../utils/scripted-agent-llm';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { TestMcpServer } from '../utils/test-mcp-server';
import { startUpstream, Upstream, waitForRun } from '../utils/workflows-fixtures';

/**
 * Credentials: "use" must not mean "read". Through REST and MCP: a credential goes only to the
 * hosts its editors allowed, refused before sending anywhere else (a run, a test, a dropdown),
 * every use is recorded for its owner, a change of where a secret goes needs the secret again,
 * and the masks cover every form the service itself puts a secret in, tool results sent to a
 * model included.
 */
describe('credential use is not read', () => {
  const LLM_KEY = 'sk-credential-use-0123';
  let t: TestApp;
  let api: Upstream;
  let thief: Upstream;
  let mcp: TestMcpServer;
  let llm: ScriptedAgentLlm;
  let viewer: TestUser;
  let tokenEndpoint: Server;
  let tokenEndpointUrl: string;

  beforeAll(async () => {
    api = await startUpstream();
    thief = await startUpstream();
    mcp = await TestMcpServer.start({ token: 'mcp-token-for-the-agent-42' });
    llm = await ScriptedAgentLlm.start({ apiKey: LLM_KEY });
    // A token endpoint that refuses, quoting the secret it was sent back in its error text.
    tokenEndpoint = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const secret = new URLSearchParams(body).get('client_secret');
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_client', error_description: `client_secret ${secret} is not known` }));
      });
    });
    await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
    tokenEndpointUrl = `http://127.0.0.1:${(tokenEndpoint.address() as AddressInfo).port}/token`;
    t = await startTestApp({
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      LLM_URL: `${llm.url}/v1`,
      LLM_API_KEY: LLM_KEY,
      LLM_MODEL: 'scripted-mini',
    });
    viewer = await t.createUser('viewer');
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([api?.close(), thief?.close(), mcp?.close(), llm?.close()]);
    await new Promise((resolve) => tokenEndpoint?.close(resolve));
  });

  const hostOf = (url: string) => new URL(url).host;

  const createCredential = async (body: Record<string, unknown>) => {
    const created = await t.request('POST', '/api/v1/credentials', { body });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const shareWithViewer = async (id: string) =>
    expect((await t.request('PUT', `/api/v1/credentials/${id}/members/${viewer.id}`, { body: { role: 'viewer' } })).status).toBe(200);

  /** A test run of `url` through http-request with the credential, as `key`'s user. */
  const send = async (credential: string, url: string, key = t.admin.key) => {
    const created = await t.request('POST', '/api/v1/workflows', {
      key,
      body: {
        name: 'send it',
        definition: {
          nodes: [
            { id: 'hook', type: 'webhook-trigger', parameters: {} },
            { id: 'call', type: 'http-request', parameters: { method: 'GET', url, credential } },
          ],
          edges: [{ from: 'hook', to: 'call' }],
        },
      },
    });
    expect(created.status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { key, body: { runType: 'test' } });
    return waitForRun(t.request, started.body.runId, { key, timeoutMs: 60_000 });
  };

  it("refuses to send a viewer's header credential to a host its editors did not allow, before sending, and records both uses", async () => {
    const credential = await createCredential({
      name: 'Search API',
      type: 'header',
      settings: { name: 'X-Api-Key' },
      secrets: { value: 'hdr-secret-value-0001' },
      allowedHosts: [hostOf(api.url)],
    });
    await shareWithViewer(credential);

    const stolen = await send(credential, `${thief.url}/echo/steal`, viewer.key);
    expect(stolen.status).toBe('failed');
    expect(stolen.error.message).toContain(`may be sent to ${hostOf(api.url)}, not to ${hostOf(thief.url)}`);
    expect(thief.received).toEqual([]);

    const fine = await send(credential, `${api.url}/echo/fine`, viewer.key);
    expect(fine.status).toBe('succeeded');
    expect(api.received.at(-1)!.headers['x-api-key']).toBe('hdr-secret-value-0001');
    expect(JSON.stringify(fine)).not.toContain('hdr-secret-value-0001');

    const uses = await t.request('GET', `/api/v1/credentials/${credential}/uses`);
    expect(uses.status).toBe(200);
    expect(uses.body.items).toEqual([
      { userId: viewer.id, at: expect.any(String), host: hostOf(api.url), kind: 'test', runId: fine.id, allowed: true },
      { userId: viewer.id, at: expect.any(String), host: hostOf(thief.url), kind: 'test', runId: stolen.id, allowed: false },
    ]);
    // Only its owner reads them.
    expect((await t.request('GET', `/api/v1/credentials/${credential}/uses`, { key: viewer.key })).status).toBe(403);
  });

  it('refuses the mcp-client tool dropdown to another host too, and records it as a dropdown use', async () => {
    const credential = await createCredential({
      name: 'MCP token',
      type: 'bearer',
      secrets: { token: 'mcp-token-for-the-agent-42' },
      allowedHosts: [hostOf(api.url)],
    });
    await shareWithViewer(credential);
    const parameters = encodeURIComponent(JSON.stringify({ url: mcp.url, credential }));
    const listed = await t.request('GET', `/api/v1/node-types/mcp-client/1/parameters/tool/options?parameters=${parameters}`, {
      key: viewer.key,
    });
    expect(JSON.stringify(listed.body)).toContain(`not to ${hostOf(mcp.url)}`);
    expect(mcp.requests).toEqual([]);
    const uses = await t.request('GET', `/api/v1/credentials/${credential}/uses`);
    expect(uses.body.items).toEqual([
      { userId: viewer.id, at: expect.any(String), host: hostOf(mcp.url), kind: 'dropdown', runId: null, allowed: false },
    ]);
  });

  it("adopts the host of its owner's first use when none was allowed, and refuses anyone else's first use, recording the host it proposed", async () => {
    const owners = await createCredential({ name: 'fresh', type: 'bearer', secrets: { token: 'fresh-token-0002' } });
    expect((await t.request('GET', `/api/v1/credentials/${owners}`)).body.allowedHosts).toEqual([]);
    expect((await send(owners, `${api.url}/echo/first`)).status).toBe('succeeded');
    expect((await t.request('GET', `/api/v1/credentials/${owners}`)).body.allowedHosts).toEqual([hostOf(api.url)]);
    expect((await send(owners, `${thief.url}/echo/second`)).status).toBe('failed');

    const shared = await createCredential({ name: 'fresh shared', type: 'bearer', secrets: { token: 'fresh-token-0003' } });
    await shareWithViewer(shared);
    const proposed = await send(shared, `${thief.url}/echo/mine`, viewer.key);
    expect(proposed.status).toBe('failed');
    expect(proposed.error.message).toContain('may be sent to no host yet');
    expect((await t.request('GET', `/api/v1/credentials/${shared}`)).body.allowedHosts).toEqual([]);
    expect((await t.request('GET', `/api/v1/credentials/${shared}/uses`)).body.items).toEqual([
      expect.objectContaining({ userId: viewer.id, host: hostOf(thief.url), allowed: false }),
    ]);
    expect(thief.received).toEqual([]);
  });

  it('needs the secret again to change where it goes: tokenUrl, or another allowed host', async () => {
    const editor = await t.createUser('cred-editor');
    const credential = await createCredential({
      name: 'OAuth',
      type: 'oauth2-client-credentials',
      settings: { tokenUrl: `${api.url}/token`, clientId: 'svc' },
      secrets: { clientSecret: 'client-secret-0004' },
      allowedHosts: [hostOf(api.url)],
    });
    await t.request('PUT', `/api/v1/credentials/${credential}/members/${editor.id}`, { body: { role: 'editor' } });
    const moved = await t.request('PATCH', `/api/v1/credentials/${credential}`, {
      key: editor.key,
      body: { settings: { tokenUrl: `${thief.url}/token`, clientId: 'svc' } },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.details.fields).toEqual([{ field: 'secrets', reason: expect.stringContaining('settings.tokenUrl') }]);
    const widened = await t.request('PATCH', `/api/v1/credentials/${credential}`, {
      key: editor.key,
      body: { allowedHosts: [hostOf(api.url), hostOf(thief.url)] },
    });
    expect(widened.status).toBe(400);
    expect(widened.body.details.fields).toEqual([{ field: 'secrets', reason: expect.stringContaining(hostOf(thief.url)) }]);
    // Renaming and narrowing need nothing more; with the secret given, the move is taken.
    expect(
      (await t.request('PATCH', `/api/v1/credentials/${credential}`, { key: editor.key, body: { name: 'OAuth 2', allowedHosts: [] } }))
        .status,
    ).toBe(200);
    const withSecret = await t.request('PATCH', `/api/v1/credentials/${credential}`, {
      key: editor.key,
      body: { settings: { tokenUrl: `${thief.url}/token`, clientId: 'svc' }, secrets: { clientSecret: 'their-own-secret' } },
    });
    expect(withSecret.status).toBe(200);
    expect(withSecret.body.settings.tokenUrl).toBe(`${thief.url}/token`);
    const bad = await t.request('PATCH', `/api/v1/credentials/${credential}`, { key: editor.key, body: { allowedHosts: ['Not A Host!'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.fields[0].field).toMatch(/^allowedHosts/);
  });

  it('masks the URL-encoded and form-encoded forms of a query secret, and the Basic form of a password', async () => {
    const query = await createCredential({
      name: 'query key',
      type: 'query',
      settings: { name: 'key' },
      secrets: { value: 'q~secret value+0005' },
      allowedHosts: [hostOf(api.url)],
    });
    const record = await send(query, `${api.url}/echo/q`);
    expect(record.status).toBe('succeeded');
    const text = JSON.stringify(record);
    for (const form of ['q~secret value+0005', 'q%7Esecret+value%2B0005', 'q~secret%20value%2B0005', 'q%7Esecret%20value%2B0005']) {
      expect(text).not.toContain(form);
    }
    expect(api.received.at(-1)!.path).toContain('key=');

    const basic = await createCredential({
      name: 'basic',
      type: 'basic',
      settings: { username: 'ada' },
      secrets: { password: 'pw~0006' },
      allowedHosts: [hostOf(api.url)],
    });
    const basicRecord = await send(basic, `${api.url}/echo/b`);
    expect(JSON.stringify(basicRecord)).not.toContain(Buffer.from('ada:pw~0006').toString('base64'));
  });

  it("masks the OAuth2 token endpoint's error text when it quotes the client secret", async () => {
    const credential = await createCredential({
      name: 'echoing oauth',
      type: 'oauth2-client-credentials',
      settings: { tokenUrl: tokenEndpointUrl, clientId: 'svc' },
      secrets: { clientSecret: 'cs~0007 x' },
      allowedHosts: [hostOf(api.url)],
    });
    const record = await send(credential, `${api.url}/echo/o`);
    expect(record.status).toBe('failed');
    expect(record.error.message).toContain('invalid_client');
    const text = JSON.stringify(record);
    for (const form of ['cs~0007 x', 'cs%7E0007+x', 'cs~0007%20x']) expect(text).not.toContain(form);
  });

  it("masks an agent's tool result that echoes a credential before it reaches the model", async () => {
    const credential = await createCredential({
      name: 'agent MCP',
      type: 'bearer',
      secrets: { token: 'mcp-token-for-the-agent-42' },
      allowedHosts: [hostOf(mcp.url)],
    });
    llm.script = (request, turn) =>
      turn === 0 ? { toolCalls: [{ name: 'whoami', arguments: {} }] } : { content: `the tool said: ${lastUserText(request)}` };
    const created = await t.request('POST', '/api/v1/workflows', {
      body: {
        name: 'agent',
        definition: {
          nodes: [
            { id: 'hook', type: 'webhook-trigger', parameters: {} },
            {
              id: 'agent',
              type: 'ai-agent',
              parameters: { message: 'who am I?', mcpServers: [{ url: mcp.url, credential, tools: ['whoami'] }] },
            },
          ],
          edges: [{ from: 'hook', to: 'agent' }],
        },
      },
    });
    const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test' } });
    const record = await waitForRun(t.request, started.body.runId, { timeoutMs: 60_000 });
    expect(record.status).toBe('succeeded');
    const toModel = JSON.stringify(llm.requests.at(-1)!.body.messages);
    expect(toModel).toContain('authorization: ');
    expect(toModel).not.toContain('mcp-token-for-the-agent-42');
    expect(JSON.stringify(record)).not.toContain('mcp-token-for-the-agent-42');
  });
});
