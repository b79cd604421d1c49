import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../config/app-config';
import { AppError, ErrorCode } from './app-error';
import { isBlockedAddress, type LookupFn, SafeFetch, type SafeFetchOptions } from './safe-fetch';

type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

interface TestServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: IncomingMessage[];
}

const servers: Server[] = [];
const clients: SafeFetch[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function startServer(handler: Handler): Promise<TestServer> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    void handler(req, res);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, port, requests };
}

function client(options: Partial<SafeFetchOptions> = {}): SafeFetch {
  const safeFetch = new SafeFetch({
    allowedHosts: ['127.0.0.1'],
    connectTimeoutMs: 5_000,
    timeoutMs: 10_000,
    maxBytes: 1024 * 1024,
    ...options,
  });
  clients.push(safeFetch);
  return safeFetch;
}

/** Resolves names from a fixed table, as a test DNS. */
function fakeDns(table: Record<string, string[]>): LookupFn {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the fetch to fail');
    },
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

const echo: Handler = async (req, res) => {
  const body = await readBody(req);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
};

function redirect(res: ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location });
  res.end();
}

function json(body: Buffer): any {
  return JSON.parse(body.toString());
}

describe('SafeFetch', () => {
  it('exports the address classifier', () => {
    expect(isBlockedAddress('169.254.169.254')).toContain('metadata');
  });

  describe('address policy', () => {
    it('reaches a loopback server named in allowedHosts', async () => {
      const server = await startServer((_req, res) => res.end('hello'));
      const response = await client().fetch(`${server.origin}/greeting?x=1`);
      expect(response.status).toBe(200);
      expect(response.body.toString()).toBe('hello');
      expect(response.url).toBe(`${server.origin}/greeting?x=1`);
      expect(server.requests[0].url).toBe('/greeting?x=1');
    });

    it('refuses loopback when allowedHosts does not name it, before connecting', async () => {
      const server = await startServer((_req, res) => res.end('secret'));
      const error = await failure(client({ allowedHosts: [] }).fetch(`${server.origin}/`));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(`127.0.0.1:${server.port}`);
      expect(error.message).toContain('loopback');
      expect(server.requests).toHaveLength(0);
    });

    it('accepts a CIDR entry', async () => {
      const server = await startServer((_req, res) => res.end('ok'));
      const response = await client({ allowedHosts: ['127.0.0.0/8'] }).fetch(`${server.origin}/`);
      expect(response.body.toString()).toBe('ok');
    });

    it('connects an allowed name to the address its lookup checked', async () => {
      const server = await startServer(echo);
      const safeFetch = client({ allowedHosts: ['files.test'], lookup: fakeDns({ 'files.test': ['127.0.0.1'] }) });
      const response = await safeFetch.fetch(`http://files.test:${server.port}/doc`);
      expect(json(response.body).headers.host).toBe(`files.test:${server.port}`);
    });

    it('refuses a name that resolves to a private address', async () => {
      const safeFetch = client({ allowedHosts: [], lookup: fakeDns({ 'intranet.test': ['10.0.0.5'] }) });
      const error = await failure(safeFetch.fetch('http://intranet.test/'));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
      expect(error.message).toContain('intranet.test');
      expect(error.message).toContain('10.0.0.5');
      expect(error.message).toContain('private');
    });

    it('refuses a name when any one of its addresses is private', async () => {
      // Loopback first: an implementation that let one good address vouch for all would connect there, not outside.
      const server = await startServer((_req, res) => res.end('secret'));
      const lookup = fakeDns({ 'mixed.test': ['127.0.0.1', '8.8.8.8'] });
      const error = await failure(client({ allowedHosts: [], lookup }).fetch(`http://mixed.test:${server.port}/`));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
      expect(error.message).toContain('127.0.0.1');
      expect(server.requests).toHaveLength(0);
    });

    it('keeps cloud metadata closed even for an allowed name', async () => {
      const lookup = fakeDns({ 'metadata.test': ['169.254.169.254'] });
      const error = await failure(client({ allowedHosts: ['metadata.test'], lookup }).fetch('http://metadata.test/'));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
      expect(error.message).toContain('metadata');
    });

    test.each([
      ['http://[::1]/', 'loopback'],
      ['http://[::ffff:127.0.0.1]/', 'loopback'],
      ['http://[fe80::1]/', 'link-local'],
      ['http://[fc00::1]/', 'unique-local'],
      ['http://100.64.0.1/', 'carrier-grade NAT'],
      ['http://0.0.0.0/', 'unspecified'],
      ['http://224.0.0.1/', 'multicast'],
      ['http://169.254.169.254/latest/meta-data/', 'metadata'],
      ['https://192.168.0.1/', 'private'],
      ['http://2130706433/', 'loopback'],
      ['http://0x7f.1/', 'loopback'],
    ])('refuses the literal %s', async (url, reason) => {
      const error = await failure(client({ allowedHosts: [] }).fetch(url));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
      expect(error.message).toContain(reason);
    });

    test.each(['file:///etc/passwd', 'ftp://127.0.0.1/file', 'data:text/plain,hello', 'gopher://127.0.0.1/'])(
      'refuses the scheme of %s',
      async (url) => {
        const error = await failure(client().fetch(url));
        expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
        expect(error.message).toMatch(/only http: and https:/);
      },
    );

    it('refuses a URL it cannot parse', async () => {
      const error = await failure(client().fetch('not a url'));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
    });
  });

  describe('redirects', () => {
    it('follows a redirect and reports the final URL', async () => {
      const server = await startServer((req, res) => (req.url === '/start' ? redirect(res, 302, '/end') : res.end('arrived')));
      const response = await client().fetch(`${server.origin}/start`);
      expect(response.status).toBe(200);
      expect(response.url).toBe(`${server.origin}/end`);
      expect(response.body.toString()).toBe('arrived');
    });

    test.each([
      ['http://169.254.169.254/latest/meta-data/', 'metadata'],
      ['http://127.0.0.2/', 'loopback'],
      ['http://[::1]/', 'loopback'],
      ['file:///etc/passwd', 'only http: and https:'],
    ])('re-checks the target of a redirect to %s', async (target, reason) => {
      const server = await startServer((_req, res) => redirect(res, 302, target));
      const error = await failure(client().fetch(`${server.origin}/`));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
      expect(error.message).toContain(reason);
    });

    it('re-resolves a redirect to a name and refuses its private address', async () => {
      const server = await startServer((_req, res) => redirect(res, 301, 'http://internal.test/'));
      const lookup = fakeDns({ 'internal.test': ['192.168.10.10'] });
      const error = await failure(client({ lookup }).fetch(`${server.origin}/`));
      expect(error.message).toContain('192.168.10.10');
    });

    it('follows at most maxRedirects redirects', async () => {
      // /hop/N redirects to /hop/N-1; /hop/0 answers.
      const server = await startServer((req, res) => {
        const n = Number(req.url?.split('/')[2]);
        if (n > 0) redirect(res, 302, `/hop/${n - 1}`);
        else res.end('landed');
      });
      const safeFetch = client({ maxRedirects: 2 });
      expect((await safeFetch.fetch(`${server.origin}/hop/2`)).body.toString()).toBe('landed');

      const error = await failure(safeFetch.fetch(`${server.origin}/hop/3`));
      expect(error.code).toBe(ErrorCode.FETCH_BLOCKED);
      expect(error.message).toContain('more than 2 redirects');
      expect(server.requests.map((r) => r.url).slice(3)).toEqual(['/hop/3', '/hop/2', '/hop/1']);
    });

    it('stops at 5 redirects by default', async () => {
      const server = await startServer((_req, res) => redirect(res, 307, '/again'));
      const error = await failure(client().fetch(`${server.origin}/`));
      expect(error.message).toContain('more than 5 redirects');
      expect(server.requests).toHaveLength(6);
    });

    test.each([
      [303, 'POST', 'GET'],
      [303, 'PUT', 'GET'],
      [302, 'POST', 'GET'],
      [301, 'POST', 'GET'],
      [307, 'POST', 'POST'],
      [308, 'PUT', 'PUT'],
    ] as const)('a %i after %s continues with %s', async (status, method, expected) => {
      const server = await startServer((req, res) => (req.url === '/form' ? redirect(res, status, '/result') : echo(req, res)));
      const response = await client().fetch(`${server.origin}/form`, {
        method,
        headers: { 'Content-Type': 'text/plain' },
        body: 'x=1',
      });
      const seen = json(response.body);
      expect(seen.method).toBe(expected);
      expect(seen.body).toBe(expected === 'GET' ? '' : 'x=1');
      expect(seen.headers['content-type']).toBe(expected === 'GET' ? undefined : 'text/plain');
    });

    it('keeps credentials on the same origin and drops them across origins', async () => {
      const other = await startServer(echo);
      const server = await startServer((req, res) => {
        if (req.url === '/same') redirect(res, 302, '/echo');
        else if (req.url === '/cross') redirect(res, 302, `${other.origin}/echo`);
        else void echo(req, res);
      });
      const headers = { Authorization: 'Bearer secret', Cookie: 'session=1', 'X-Trace': 't-1' };
      const safeFetch = client();

      const same = json((await safeFetch.fetch(`${server.origin}/same`, { headers })).body).headers;
      expect(same).toMatchObject({ authorization: 'Bearer secret', cookie: 'session=1', 'x-trace': 't-1' });

      const cross = json((await safeFetch.fetch(`${server.origin}/cross`, { headers })).body).headers;
      expect(cross.authorization).toBeUndefined();
      expect(cross.cookie).toBeUndefined();
      expect(cross['x-trace']).toBe('t-1');
    });

    it('drops the headers the caller calls sensitive across origins too, and keeps them on the same origin', async () => {
      const other = await startServer(echo);
      const server = await startServer((req, res) => {
        if (req.url === '/same') redirect(res, 307, '/echo');
        else if (req.url === '/cross') redirect(res, 307, `${other.origin}/echo`);
        else void echo(req, res);
      });
      const request = { headers: { 'X-Api-Key': 'k-123', 'X-Trace': 't-1' }, sensitiveHeaders: ['X-Api-Key'] };
      expect(json((await client().fetch(`${server.origin}/same`, request)).body).headers['x-api-key']).toBe('k-123');
      const cross = json((await client().fetch(`${server.origin}/cross`, request)).body).headers;
      expect(cross['x-api-key']).toBeUndefined();
      expect(cross['x-trace']).toBe('t-1');
    });

    it('returns the redirect itself when followRedirects is false', async () => {
      const server = await startServer((_req, res) => redirect(res, 302, 'http://169.254.169.254/'));
      const response = await client().fetch(`${server.origin}/`, { followRedirects: false });
      expect(response.status).toBe(302);
      expect(response.headers.location).toBe('http://169.254.169.254/');
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('size cap', () => {
    it('refuses a declared Content-Length above the cap without waiting for the body', async () => {
      // The body never completes: a client that read before checking would end in TIMEOUT instead.
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-length': '1000000' });
        res.write('only the start');
      });
      const error = await failure(client({ maxBytes: 1000 }).fetch(`${server.origin}/big`));
      expect(error.code).toBe(ErrorCode.FILE_TOO_LARGE);
      expect(error.message).toContain('1000 bytes');
    });

    it('aborts a chunked body as soon as it passes the cap', async () => {
      const total = 32 * 1024 * 1024;
      let finished: Promise<boolean> = Promise.resolve(true);
      const server = await startServer(async (_req, res) => {
        finished = new Promise((resolve) => res.on('close', () => resolve(res.writableFinished)));
        const chunk = Buffer.alloc(64 * 1024, 'a');
        for (let sent = 0; sent < total && !res.destroyed; sent += chunk.length) {
          if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        }
        res.end();
      });
      const error = await failure(client({ maxBytes: 256 * 1024 }).fetch(`${server.origin}/stream`));
      expect(error.code).toBe(ErrorCode.FILE_TOO_LARGE);
      expect(await finished).toBe(false);
    });

    it('accepts a body of exactly the cap, chunked or declared', async () => {
      const server = await startServer((req, res) => {
        if (req.url === '/chunked') res.write('12345');
        res.end(req.url === '/chunked' ? '67890' : '1234567890');
      });
      const safeFetch = client({ maxBytes: 10 });
      expect((await safeFetch.fetch(`${server.origin}/chunked`)).body.toString()).toBe('1234567890');
      expect((await safeFetch.fetch(`${server.origin}/declared`)).body.toString()).toBe('1234567890');
      const error = await failure(safeFetch.fetch(`${server.origin}/chunked`, { maxBytes: 9 }));
      expect(error.code).toBe(ErrorCode.FILE_TOO_LARGE);
    });

    it('does not apply the cap to the Content-Length of a HEAD response', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(200, { 'content-length': '5000000' });
        res.end();
      });
      const response = await client({ maxBytes: 10 }).fetch(`${server.origin}/`, { method: 'HEAD' });
      expect(response.headers['content-length']).toBe('5000000');
      expect(response.body).toHaveLength(0);
    });
  });

  describe('timeouts and cancellation', () => {
    const silent: Handler = () => undefined;

    it('times out on a server that never answers', async () => {
      const server = await startServer(silent);
      const error = await failure(client({ timeoutMs: 200 }).fetch(`${server.origin}/`));
      expect(error.code).toBe(ErrorCode.TIMEOUT);
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('200 ms');
    });

    it('times out on a body that stalls', async () => {
      const server = await startServer((_req, res) => res.write('partial'));
      const error = await failure(client().fetch(`${server.origin}/`, { timeoutMs: 200 }));
      expect(error.code).toBe(ErrorCode.TIMEOUT);
    });

    it('applies the connect timeout to a resolver that never answers', async () => {
      const lookup: LookupFn = () => new Promise(() => undefined);
      const error = await failure(client({ connectTimeoutMs: 100, lookup }).fetch('http://slow-dns.test/'));
      expect(error.code).toBe(ErrorCode.TIMEOUT);
      expect(error.message).toContain('Connecting to slow-dns.test');
    });

    it('cancels when the caller aborts', async () => {
      const server = await startServer(silent);
      const controller = new AbortController();
      const pending = client().fetch(`${server.origin}/`, { signal: controller.signal });
      while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      const error = await failure(pending);
      expect(error.code).toBe(ErrorCode.CANCELED);
    });

    it('does not start when the signal is already aborted', async () => {
      const server = await startServer((_req, res) => res.end());
      const error = await failure(client().fetch(`${server.origin}/`, { signal: AbortSignal.abort() }));
      expect(error.code).toBe(ErrorCode.CANCELED);
      expect(server.requests).toHaveLength(0);
    });
  });

  describe('responses and failures', () => {
    it('returns error statuses as data', async () => {
      const server = await startServer((_req, res) => {
        res.writeHead(503, { 'retry-after': '1' });
        res.end('busy');
      });
      const response = await client().fetch(`${server.origin}/`);
      expect(response.status).toBe(503);
      expect(response.body.toString()).toBe('busy');
    });

    it('lower-cases header names and joins repeated headers', async () => {
      const server = await startServer((_req, res) => {
        res.setHeader('X-Custom-Header', 'Value');
        res.setHeader('Set-Cookie', ['a=1', 'b=2']);
        res.end();
      });
      const { headers } = await client().fetch(`${server.origin}/`);
      expect(headers['x-custom-header']).toBe('Value');
      expect(headers['set-cookie']).toBe('a=1, b=2');
      expect(Object.keys(headers).every((name) => name === name.toLowerCase())).toBe(true);
    });

    it('sends method, headers and body', async () => {
      const server = await startServer(echo);
      const response = await client().fetch(`${server.origin}/items`, {
        method: 'PATCH',
        headers: { 'X-Api-Key': 'k' },
        body: Buffer.from('{"a":1}'),
      });
      expect(json(response.body)).toMatchObject({ method: 'PATCH', body: '{"a":1}', headers: { 'x-api-key': 'k' } });
    });

    it('reports a refused connection as a retryable FETCH_FAILED', async () => {
      const server = await startServer(echo);
      servers.pop()?.close();
      await new Promise((resolve) => setTimeout(resolve, 10));
      const error = await failure(client().fetch(`${server.origin}/`));
      expect(error.code).toBe(ErrorCode.FETCH_FAILED);
      expect(error.retryable).toBe(true);
    });

    it('reports a DNS failure as a retryable FETCH_FAILED', async () => {
      const error = await failure(client({ lookup: fakeDns({}) }).fetch('http://nowhere.test/'));
      expect(error.code).toBe(ErrorCode.FETCH_FAILED);
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('nowhere.test');
    });
  });

  it('takes its limits and allowlist from the config', async () => {
    const server = await startServer((_req, res) => res.end('more than ten bytes'));
    const safeFetch = SafeFetch.fromConfig(loadConfig({ FETCH_ALLOWED_HOSTS: '10.0.0.0/8, 127.0.0.1', MAX_FILE_BYTES: '10' }));
    clients.push(safeFetch);
    const error = await failure(safeFetch.fetch(`${server.origin}/`));
    expect(error.code).toBe(ErrorCode.FILE_TOO_LARGE);
  });
});
