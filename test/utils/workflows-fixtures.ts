import Redis from 'ioredis';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** A request the upstream test server received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Upstream {
  url: string;
  received: ReceivedRequest[];
  /** Resolves when the n-th request (1-based) has arrived. */
  nth(n: number): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

/**
 * A local HTTP server standing in for the outside world. `/echo...` answers 200 with JSON of what
 * it got (headers included, so a secret header comes straight back); `/slow?ms=N` answers after N
 * ms; `/status/N` answers with status N.
 */
export async function startUpstream(): Promise<Upstream> {
  const received: ReceivedRequest[] = [];
  const waiters: { n: number; resolve: (r: ReceivedRequest) => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://upstream');
      const request = {
        method: req.method!,
        path: url.pathname + url.search,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      for (const waiter of waiters.filter((w) => w.n === received.length)) waiter.resolve(request);
      const reply = () => {
        const status = url.pathname.startsWith('/status/') ? Number(url.pathname.split('/')[2]) : 200;
        let parsedBody: unknown = request.body;
        try {
          parsedBody = JSON.parse(request.body);
        } catch {
          // not JSON: echo the text
        }
        res.writeHead(status, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        res.end(JSON.stringify({ method: request.method, path: request.path, headers: req.headers, body: parsedBody }));
      };
      if (url.pathname === '/slow') setTimeout(reply, Number(url.searchParams.get('ms') ?? 1000)).unref();
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    nth: (n) => (received.length >= n ? Promise.resolve(received[n - 1]) : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Requester = (
  method: string,
  path: string,
  options?: { key?: string | null; body?: unknown },
) => Promise<{ status: number; body: any }>;

export const TERMINAL = ['succeeded', 'failed', 'canceled'];

/** Polls GET /api/v1/runs/:id until the run reaches one of `statuses` (default: any terminal one). */
export async function waitForRun(
  request: Requester,
  runId: string,
  options: { statuses?: string[]; timeoutMs?: number; key?: string } = {},
): Promise<any> {
  const statuses = options.statuses ?? TERMINAL;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let last: any;
  while (Date.now() < deadline) {
    const res = await request('GET', `/api/v1/runs/${runId}`, options.key ? { key: options.key } : {});
    last = res.body;
    if (res.status === 200 && statuses.includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} did not reach ${statuses.join('/')} in time; last seen: ${JSON.stringify(last)}`);
}

/**
 * The workflow of the done-when test: webhook trigger -> HTTP Request whose URL is a template over
 * a variable and the input, whose headers carry a secret variable, and whose JSON body is built
 * from the input.
 */
export function searchWorkflow(baseUrl: string, secret: string, extraHeader = 'draft') {
  return {
    nodes: [
      { id: 'trigger', type: 'webhook-trigger', parameters: {} },
      {
        id: 'search',
        type: 'http-request',
        parameters: {
          method: 'POST',
          url: '${variables.baseUrl}/echo/${input.collection}',
          headers: `{"x-api-key": variables.apiKey, "x-flavour": "${extraHeader}"}`,
          body: '{"text": input.query, "top_k": "5"}',
        },
        parameterMode: { url: 'expression', headers: 'expression', body: 'expression' },
      },
    ],
    edges: [{ from: 'trigger', to: 'search' }],
    variables: [
      { name: 'baseUrl', type: 'string', value: baseUrl },
      { name: 'apiKey', type: 'secret', value: secret },
    ],
  };
}

export interface TestRedis {
  url: string;
  /** QUEUE_PREFIX of this test's Bull queues, so parallel test files never take each other's jobs. */
  prefix: string;
  /** Length of a Bull list (`wait`, `active`...) of a queue under the prefix. */
  count(queue: string, list: string): Promise<number>;
  /** Deletes every key under the prefix. */
  cleanup(): Promise<void>;
}

/** Redis for one test file or bench, under a Bull prefix of its own; null when Redis is not reachable. */
export async function testRedis(label: string): Promise<TestRedis | null> {
  const url = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `test-${label}-${process.pid}-${Date.now().toString(36)}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1000, retryStrategy: () => null });
  try {
    await probe.connect();
    await probe.ping();
  } catch {
    return null;
  } finally {
    probe.disconnect();
  }
  return {
    url,
    prefix,
    async count(queue, list) {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        return await client.llen(`${prefix}:${queue}:${list}`);
      } finally {
        client.disconnect();
      }
    },
    async cleanup() {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          if (keys.length) await client.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        client.disconnect();
      }
    },
  };
}
