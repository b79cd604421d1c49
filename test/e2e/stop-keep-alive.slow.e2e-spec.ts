import { rmSync } from 'node:fs';
import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { bootService, freePort, logLines, Spawned, stopService, tempDir } from '../utils/processes';

const KEY = 'wcs_keepalive_bootstrap_key_0123456789';

/**
 * SIGTERM while a run drains: a client holding a kept-alive connection hears the server close it
 * (FIN) when the stop begins, never a reset after it wrote a request, and a POST on a new
 * connection is answered 503 with `Connection: close` and Retry-After.
 */
describe('stopping with kept-alive connections open', () => {
  let service: Spawned | undefined;
  let dataDir: string;
  let gate: Server;
  let held: ServerResponse | undefined;
  let heldSeen: () => void = () => undefined;

  beforeAll(async () => {
    gate = createServer((req, res) => {
      held = res;
      heldSeen();
    });
    gate.maxConnections = 8;
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    dataDir = tempDir('keepalive');
  }, 60_000);

  afterAll(async () => {
    held?.end('{}');
    await stopService(service);
    gate.closeAllConnections();
    await new Promise<void>((resolve) => gate.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** One raw HTTP/1.1 exchange on `socket`: the response head and body as text. */
  const exchange = (socket: Socket, request: string): Promise<string> =>
    new Promise((resolve, reject) => {
      let text = '';
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        const [head, body = ''] = text.split('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? NaN);
        if (text.includes('\r\n\r\n') && body.length >= length) {
          socket.off('data', onData);
          socket.off('error', reject);
          resolve(text);
        }
      };
      socket.on('data', onData);
      socket.once('error', reject);
      socket.write(request);
    });

  it('closes idle connections at once and answers a new one 503 with Connection: close', async () => {
    const port = await freePort();
    service = await bootService(port, {
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: KEY,
      WORKERS: '1',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
      EMBEDDING_THREADS: '1',
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
    });
    const url = `http://127.0.0.1:${port}`;
    const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
    const gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        // A POST must not run twice: the stop lets it finish, so the drain lasts until the gate answers.
        { id: 'send', type: 'http-request', parameters: { method: 'POST', url: `${gateUrl}/held`, body: '{}' } },
      ],
      edges: [{ from: 'trigger', to: 'send' }],
    };
    const created = (await (
      await fetch(`${url}/api/v1/workflows`, { method: 'POST', headers, body: JSON.stringify({ name: 'held', definition }) })
    ).json()) as {
      id: string;
    };
    expect((await fetch(`${url}/api/v1/workflows/${created.id}/publish`, { method: 'POST', headers: { 'x-api-key': KEY } })).status).toBe(
      201,
    );
    const seen = new Promise<void>((resolve) => (heldSeen = resolve));
    expect((await fetch(`${url}/api/v1/workflows/${created.id}/runs`, { method: 'POST', headers, body: '{"input":{}}' })).status).toBe(202);
    await seen;

    const kept = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => kept.once('connect', () => resolve()));
    const first = await exchange(kept, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    const ended = new Promise<'end' | string>((resolve) => {
      kept.once('end', () => resolve('end'));
      kept.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });

    service.child.kill('SIGTERM');
    // The run's POST holds the drain: the server is still up, refusing work.
    expect(await ended).toBe('end');
    expect(logLines(service.output()).some((line) => line.msg === 'shutdown complete')).toBe(false);

    const fresh = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => fresh.once('connect', () => resolve()));
    const body = '{"input":{}}';
    const answer = await exchange(
      fresh,
      `POST /api/v1/workflows/${created.id}/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nx-api-key: ${KEY}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toMatch(/\r\nretry-after: \d+\r\n/i);
    fresh.destroy();
    kept.destroy();

    held?.end('{}');
    held = undefined;
    expect(await service.exited(60_000)).toEqual({ code: 0, signal: null });
    service = undefined;
  }, 240_000);
});
