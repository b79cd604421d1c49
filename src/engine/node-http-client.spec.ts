import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { SafeFetch } from '../common/safe-fetch';
import { nodeHttpClient } from './node-http-client';

/** ctx.http turns the service's fetch failures into the node error types the executor retries by. */
describe('nodeHttpClient', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') return res.end('x'.repeat(64 * 1024));
      if (req.url === '/hang') return;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const fetcher = (allowedHosts: string[]) =>
    new SafeFetch({ allowedHosts, connectTimeoutMs: 2000, timeoutMs: 5000, maxBytes: 1024 * 1024 });

  it('refuses a private address as a configuration error, never retried', async () => {
    const guarded = fetcher([]);
    try {
      await expect(nodeHttpClient(guarded, new AbortController().signal).fetch(`${base}/`)).rejects.toMatchObject({
        kind: 'configuration',
        retryable: false,
        message: expect.stringContaining('loopback'),
      });
    } finally {
      await guarded.close();
    }
  });

  it('reports a refused connection as a retryable upstream error, and a size cap as a final one', async () => {
    const open = fetcher(['127.0.0.1']);
    try {
      const client = nodeHttpClient(open, new AbortController().signal);
      await expect(client.fetch('http://127.0.0.1:1/')).rejects.toMatchObject({ kind: 'upstream', retryable: true });
      await expect(client.fetch(`${base}/big`, { maxBytes: 1024 })).rejects.toMatchObject({ kind: 'upstream', retryable: false });
      expect((await client.fetch(`${base}/`)).body.toString()).toBe('ok');
    } finally {
      await open.close();
    }
  });

  it('reports its own time limit as a timeout, and the run signal by its reason', async () => {
    const open = fetcher(['127.0.0.1']);
    try {
      await expect(nodeHttpClient(open, new AbortController().signal).fetch(`${base}/hang`, { timeoutMs: 30 })).rejects.toMatchObject({
        kind: 'timeout',
      });
      const controller = new AbortController();
      const reason = new Error('run canceled');
      setTimeout(() => controller.abort(reason), 30);
      await expect(nodeHttpClient(open, controller.signal).fetch(`${base}/hang`)).rejects.toBe(reason);
    } finally {
      await open.close();
    }
  });
});
