import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { isNodeError, NodeConfigurationError, NodeHttpClient, NodeUpstreamError } from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import httpRequest, { HttpRequestOutput, HttpRequestParameters } from './index';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('http-request node', () => {
  let server: Server;
  let base: string;
  /** The service hands nodes its guarded client; for the node's own logic, plain fetch does. */
  const http: NodeHttpClient = {
    async fetch(url, request = {}) {
      const res = await fetch(url, { method: request.method, headers: request.headers, body: request.body });
      return { status: res.status, url: res.url, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
    },
  };
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        if (req.url === '/html-error') {
          res.writeHead(502, { 'Content-Type': 'text/html', 'X-Multi': ['a', 'b'] });
          return res.end('<h1>bad gateway</h1>');
        }
        if (req.url === '/latin1') {
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=iso-8859-1' });
          return res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
        }
        const status = /^\/status\/(\d{3})(\?|$)/.exec(req.url ?? '');
        if (status) {
          res.writeHead(Number(status[1]), { 'Content-Type': 'application/json' });
          return res.end(JSON.stringify({ error: `status ${status[1]}` }));
        }
        if (req.url === '/empty') {
          res.writeHead(204);
          return res.end();
        }
        res.writeHead(200, { 'Content-Type': 'application/json', 'X-Echo': 'yes' });
        res.end(JSON.stringify({ method: req.method, body, contentType: req.headers['content-type'] ?? null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    seen.length = 0;
  });

  async function execute(params: Partial<HttpRequestParameters>): Promise<HttpRequestOutput> {
    const ctx = inputContext(Object.assign(new HttpRequestParameters(), params), { http });
    return (await httpRequest.execute(ctx)) as HttpRequestOutput;
  }

  it('sends a JSON body with its headers and parses a JSON response', async () => {
    const output = await execute({
      method: 'POST',
      url: `${base}/search`,
      headers: '{"X-Api-Key": "k1", "X-Count": 3}',
      body: '{"text":"hi","top_k":"5"}',
    });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/search', body: '{"text":"hi","top_k":"5"}' });
    expect(seen[0].headers).toMatchObject({ 'x-api-key': 'k1', 'x-count': '3', 'content-type': 'application/json' });
    expect(output.response.status).toBe(200);
    expect(output.response.headers['x-echo']).toBe('yes');
    expect(output.response.body).toEqual({ method: 'POST', body: '{"text":"hi","top_k":"5"}', contentType: 'application/json' });
  });

  it('encodes a form body given as a JSON object, and keeps an encoded one as it is', async () => {
    const form = 'application/x-www-form-urlencoded';
    await execute({
      method: 'POST',
      url: `${base}/f`,
      headers: JSON.stringify({ 'content-type': form }),
      body: '{"a":"1 2","b":["x","y"]}',
    });
    await execute({ method: 'PUT', url: `${base}/f`, headers: JSON.stringify({ 'content-type': form }), body: 'a=1&b=2' });
    expect(seen.map((s) => s.body)).toEqual(['a=1+2&b=x&b=y', 'a=1&b=2']);
  });

  it('sends plain text as text/plain', async () => {
    await execute({ method: 'PATCH', url: `${base}/t`, body: 'just words' });
    expect(seen[0]).toMatchObject({ method: 'PATCH', body: 'just words' });
    expect(seen[0].headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('returns a non-2xx status as data, keeping a body that is not JSON as text', async () => {
    const output = await execute({ method: 'GET', url: `${base}/html-error` });
    expect(output.response).toEqual({
      status: 502,
      headers: expect.objectContaining({ 'content-type': 'text/html', 'x-multi': 'a, b' }),
      body: '<h1>bad gateway</h1>',
    });
  });

  describe('failOn', () => {
    const failure = async (params: Partial<HttpRequestParameters>): Promise<NodeUpstreamError> => {
      const error = await execute({ method: 'GET', ...params }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isNodeError(error) && error.kind === 'upstream').toBe(true);
      return error as NodeUpstreamError;
    };

    it('keeps every status as data by default', async () => {
      const output = await execute({ method: 'GET', url: `${base}/status/503` });
      expect(output.response).toMatchObject({ status: 503, body: { error: 'status 503' } });
    });

    it('with 5xx fails on a server error, naming the status, retryable, with the body in its details', async () => {
      const error = await failure({ url: `${base}/status/500?token=abc`, failOn: '5xx' });
      expect(error.message).toBe(`GET to ${base} answered HTTP 500 (failOn "5xx")`);
      expect(error).toMatchObject({ status: 500, retryable: true, details: { body: { error: 'status 500' } } });
      const notFound = await execute({ method: 'GET', url: `${base}/status/404`, failOn: '5xx' });
      expect(notFound.response.status).toBe(404);
    });

    it('with non-2xx fails on any status outside 200-299, retryable only where trying again can help', async () => {
      expect(await failure({ url: `${base}/status/404`, failOn: 'non-2xx' })).toMatchObject({ status: 404, retryable: false });
      expect(await failure({ url: `${base}/status/429`, failOn: 'non-2xx' })).toMatchObject({ status: 429, retryable: true });
      const ok = await execute({ method: 'GET', url: `${base}/status/201`, failOn: 'non-2xx' });
      expect(ok.response.status).toBe(201);
    });

    it('keeps only the start of a long body in the error', async () => {
      const long = {
        fetch: async () => ({ status: 502, url: base, headers: { 'content-type': 'text/plain' }, body: Buffer.from('x'.repeat(5000)) }),
      };
      const ctx = inputContext(Object.assign(new HttpRequestParameters(), { method: 'GET', url: `${base}/long`, failOn: '5xx' }), {
        http: long,
      });
      const error = (await Promise.resolve(httpRequest.execute(ctx)).catch((e: unknown) => e)) as NodeUpstreamError;
      expect(error.details?.body).toBe(`${'x'.repeat(2000)}... (5000 characters)`);
    });
  });

  it('keeps the body as text with responseType text, decoding its charset', async () => {
    const json = await execute({ method: 'DELETE', url: `${base}/x`, responseType: 'text' });
    expect(typeof json.response.body).toBe('string');
    expect(JSON.parse(json.response.body as string)).toMatchObject({ method: 'DELETE' });
    const latin1 = await execute({ method: 'GET', url: `${base}/latin1`, responseType: 'text' });
    expect(latin1.response.body).toBe('café');
    const empty = await execute({ method: 'GET', url: `${base}/empty` });
    expect(empty.response).toMatchObject({ status: 204, body: null });
  });

  it.each([
    [{ headers: '[1,2]' }, 'headers must be a JSON object'],
    [{ headers: '{oops' }, 'headers must be a JSON object'],
    [{ headers: '{"a": {"b": 1}}' }, 'header "a" must be a string'],
    [{ body: 'x' }, 'A GET request cannot have a body'],
    [{ method: 'POST' as const, headers: '{"content-type": "application/json"}', body: '{bad json' }, 'body is not valid JSON'],
  ])('refuses %j as a configuration error', async (params, message) => {
    const failure = execute({ method: 'GET', url: `${base}/x`, ...params });
    await expect(failure).rejects.toBeInstanceOf(NodeConfigurationError);
    await expect(failure).rejects.toThrow(message);
    expect(seen).toHaveLength(0);
  });
});
