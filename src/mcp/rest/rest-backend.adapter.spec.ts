import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, ErrorCode } from '../../common/app-error';
import { RestCollectionsBackend } from './rest-backend.adapter';

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

describe('RestCollectionsBackend', () => {
  let server: Server;
  let baseUrl: string;
  let seen: Seen[];
  let answer: (req: IncomingMessage) => { status: number; body?: string };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
        const { status, body: out } = answer(req);
        res.writeHead(status, { 'content-type': 'application/json' }).end(out);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    seen = [];
    answer = () => ({ status: 200, body: JSON.stringify({ result: [] }) });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected a failure');
      },
      (error: unknown) => error as AppError,
    );

  it('calls the REST API under the base path with the key as a bearer token', async () => {
    const backend = new RestCollectionsBackend(`${baseUrl}/service/`, 'wcs_key');
    await backend.search('col_1/..', { text: 'why', topK: 10, offset: 20 });
    answer = () => ({ status: 204 });
    await backend.deleteFile('col_1', 'fle_2');
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/service/api/v1/collections/col_1%2F../search',
        authorization: 'Bearer wcs_key',
        body: '{"text":"why","top_k":10,"offset":20}',
      },
      { method: 'DELETE', url: '/service/api/v1/collections/col_1/files/fle_2', authorization: 'Bearer wcs_key', body: '' },
    ]);
  });

  it("rebuilds the service's error from its error body", async () => {
    answer = () => ({
      status: 404,
      body: JSON.stringify({ code: 'NOT_FOUND', message: 'collection col_9 not found', requestId: 'req_1' }),
    });
    const error = await failure(new RestCollectionsBackend(baseUrl, 'k').getCollection('col_9'));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: ErrorCode.NOT_FOUND, message: 'collection col_9 not found', retryable: false });

    answer = () => ({
      status: 400,
      body: JSON.stringify({ code: 'VALIDATION_FAILED', message: 'bad', details: { fields: [{ field: 'url', reason: 'must be http' }] } }),
    });
    expect(await failure(new RestCollectionsBackend(baseUrl, 'k').addFile('col_1', { name: 'a', url: 'ftp://x' }))).toMatchObject({
      code: ErrorCode.VALIDATION_FAILED,
      details: { fields: [{ field: 'url', reason: 'must be http' }] },
    });
  });

  it('points at SERVICE_API_KEY when the key is refused', async () => {
    answer = () => ({ status: 401, body: JSON.stringify({ code: 'UNAUTHENTICATED', message: 'Invalid or revoked API key' }) });
    const error = await failure(new RestCollectionsBackend(baseUrl, 'k').listCollections({ offset: 0, limit: 100 }));
    expect(error.code).toBe(ErrorCode.UNAUTHENTICATED);
    expect(error.message).toContain('SERVICE_API_KEY');
  });

  it('treats a non-service answer and an unreachable service as temporary, naming SERVICE_URL', async () => {
    answer = () => ({ status: 502, body: '<html>Bad gateway</html>' });
    expect(await failure(new RestCollectionsBackend(baseUrl, 'k').getCollection('c'))).toMatchObject({
      code: ErrorCode.UNAVAILABLE,
      retryable: true,
    });

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(new RestCollectionsBackend(`http://127.0.0.1:${port}`, 'k').getCollection('c'));
    expect(error).toMatchObject({ code: ErrorCode.UNAVAILABLE, retryable: true });
    expect(error.message).toContain('SERVICE_URL');
  });
});
