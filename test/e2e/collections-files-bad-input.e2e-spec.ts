import { readFileSync } from 'node:fs';
import { fixturePath, REJECTED_FIXTURES } from '../fixtures/fixtures';
import { startTestApp, TestApp } from '../utils/test-app';
import { createCollection, FixtureServer, startFixtureServer, waitForFile } from './collections-files.helpers';

const MAX_FILE_BYTES = 256 * 1024;

/**
 * Every kind of bad input ends in a clear 4xx or in a file in status `error` with its reason, and
 * nothing crashes. The test server is allowed by host name (`localhost`), not by address, so
 * 127.0.0.1 itself stays a private address the service must refuse, directly or via a redirect.
 */
describe('collections: bad input to files', () => {
  let t: TestApp;
  let server: FixtureServer;
  let collectionId: string;

  const addFile = (name: string, url: unknown) => t.request('POST', `/api/v1/collections/${collectionId}/files`, { body: { name, url } });

  /** Adds by URL and waits for the outcome, which must be `error`. */
  async function failedFile(name: string, url: string): Promise<{ error: string; status: string }> {
    const res = await addFile(name, url);
    expect(res.status).toBe(201);
    return waitForFile(t, collectionId, res.body.id);
  }

  beforeAll(async () => {
    server = await startFixtureServer('localhost');
    t = await startTestApp({ FETCH_ALLOWED_HOSTS: 'localhost', MAX_FILE_BYTES: String(MAX_FILE_BYTES) });
    collectionId = await createCollection(t, 'Bad input');
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  describe('files that end in error with the reason', () => {
    it('unreachable host', async () => {
      const file = await failedFile('gone.pdf', 'http://localhost:1/gone.pdf');
      expect(file).toMatchObject({ status: 'error', error: expect.stringMatching(/^Request to localhost:1 failed: .*ECONNREFUSED/) });
    });

    it('HTTP 404', async () => {
      const file = await failedFile('missing.pdf', `${server.url}/status/404`);
      expect(file).toMatchObject({ status: 'error', error: `download failed: localhost:${server.port} answered HTTP 404` });
    });

    it('a private address', async () => {
      const file = await failedFile('private.pdf', `http://127.0.0.1:${server.port}/volcanoes.pdf`);
      expect(file.error).toMatch(/^Refused to fetch from 127\.0\.0\.1:\d+: 127\.0\.0\.1 is .*loopback/i);
      expect(file.error).toContain('the service operator can allow it with FETCH_ALLOWED_HOSTS');
    });

    it('the cloud metadata address', async () => {
      const file = await failedFile('metadata.json', 'http://169.254.169.254/latest/meta-data/');
      expect(file.error).toMatch(/^Refused to fetch from 169\.254\.169\.254/);
    });

    it('a private address reached through a redirect', async () => {
      const target = `http://127.0.0.1:${server.port}/volcanoes.pdf`;
      const file = await failedFile('redirected.pdf', `${server.url}/redirect?to=${encodeURIComponent(target)}`);
      expect(file.error).toMatch(/^Refused to fetch from 127\.0\.0\.1/);
      // The redirect was followed only as far as the check: the private address was never fetched.
      expect(server.requests.filter((path) => path === '/volcanoes.pdf')).toEqual([]);
    });

    it('a download over the size cap', async () => {
      const file = await failedFile('big.txt', `${server.url}/bytes/${MAX_FILE_BYTES + 1}`);
      expect(file.error).toMatch(/exceeds the limit of 262144 bytes/);
    });

    it('an unsupported type', async () => {
      const file = await failedFile('picture.png', `${server.url}/${REJECTED_FIXTURES.png}`);
      expect(file.error).toMatch(/^unsupported type: image\/png/);
    });

    it('a corrupt PDF', async () => {
      const file = await failedFile('broken.pdf', `${server.url}/${REJECTED_FIXTURES.corruptPdf}`);
      expect(file).toMatchObject({ status: 'error', type: 'application/pdf', error: expect.stringMatching(/^corrupt PDF: /) });
    });

    it('a zip bomb DOCX', async () => {
      const file = await failedFile('bomb.docx', `${server.url}/${REJECTED_FIXTURES.zipBombDocx}`);
      expect(file.error).toMatch(/^zip bomb: /);
    });

    it('an empty document', async () => {
      const file = await failedFile('empty.docx', `${server.url}/${REJECTED_FIXTURES.emptyDocx}`);
      expect(file.error).toBe('document has no text');
    });

    it('an empty data: URL', async () => {
      const file = await failedFile('nothing.txt', 'data:text/plain,');
      expect(file.status).toBe('error');
    });

    it('counts the failures in the stats and keeps the service answering', async () => {
      const stats = (await t.request('GET', `/api/v1/collections/${collectionId}/stats`)).body;
      expect(stats.files.error).toBe(stats.files.total);
      expect(stats.chunks).toBe(0);
      expect((await t.request('GET', '/health')).status).toBe(200);
      const content = await t.request('GET', `/api/v1/collections/${collectionId}/files`);
      const failed = content.body.items[0];
      const text = await t.request('GET', `/api/v1/collections/${collectionId}/files/${failed.id}/content`);
      expect(text.status).toBe(409);
      expect(text.body.code).toBe('CONFLICT');
    });
  });

  describe('requests refused with 4xx', () => {
    it.each([
      ['no name', { url: 'https://example.com/a.pdf' }],
      ['no url', { name: 'a.pdf' }],
      ['an empty name', { name: '  ', url: 'https://example.com/a.pdf' }],
      ['a name too long', { name: 'n'.repeat(256), url: 'https://example.com/a.pdf' }],
      ['a url that is not a string', { name: 'a.pdf', url: 42 }],
      ['a relative url', { name: 'a.pdf', url: '/a.pdf' }],
      ['an ftp url', { name: 'a.pdf', url: 'ftp://example.com/a.pdf' }],
      ['a file: url', { name: 'a.pdf', url: 'file:///etc/passwd' }],
      ['a malformed data: url', { name: 'a.txt', url: 'data:text/plain;base64' }],
      ['bad base64 in a data: url', { name: 'a.txt', url: 'data:text/plain;base64,@@@@' }],
      ['an unknown field', { name: 'a.pdf', url: 'https://example.com/a.pdf', tags: ['x'] }],
    ])('%s -> 400', async (_case, body) => {
      const res = await t.request('POST', `/api/v1/collections/${collectionId}/files`, { body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
      expect(res.body.details.fields.length).toBeGreaterThan(0);
    });

    it('malformed JSON -> 400', async () => {
      const res = await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
        rawBody: '{"name": "a.pdf", "url": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('MALFORMED_JSON');
    });

    it('a data: URL over the size cap -> 413', async () => {
      const data = Buffer.alloc(MAX_FILE_BYTES + 10, 'a').toString('base64');
      const res = await addFile('big.txt', `data:text/plain;base64,${data}`);
      expect(res.status).toBe(413);
      expect(res.body.code).toBe('FILE_TOO_LARGE');
    });

    it('an upload over the size cap -> 413, and nothing stored', async () => {
      const form = new FormData();
      form.append('file', new Blob([Buffer.alloc(MAX_FILE_BYTES + 1, 'a')]), 'huge-upload.txt');
      const res = await fetch(`${t.url}/api/v1/collections/${collectionId}/files/upload`, {
        method: 'POST',
        headers: { 'x-api-key': t.admin.key },
        body: form,
      });
      expect(res.status).toBe(413);
      expect(((await res.json()) as { code: string }).code).toBe('FILE_TOO_LARGE');
      const names = (await t.request('GET', `/api/v1/collections/${collectionId}/files?limit=100`)).body.items.map(
        (f: { name: string }) => f.name,
      );
      expect(names).not.toContain('huge-upload.txt');
    });

    it('an upload without a file part, or not multipart -> 4xx', async () => {
      const form = new FormData();
      form.append('name', 'lonely');
      const noFile = await fetch(`${t.url}/api/v1/collections/${collectionId}/files/upload`, {
        method: 'POST',
        headers: { 'x-api-key': t.admin.key },
        body: form,
      });
      expect(noFile.status).toBe(400);
      const json = await t.request('POST', `/api/v1/collections/${collectionId}/files/upload`, { body: { name: 'x' } });
      expect(json.status).toBe(415);
    });

    it('an upload of two files -> 400', async () => {
      const form = new FormData();
      const pdf = new Blob([readFileSync(fixturePath('volcanoes.pdf'))]);
      form.append('file', pdf, 'a.pdf');
      form.append('file', pdf, 'b.pdf');
      const res = await fetch(`${t.url}/api/v1/collections/${collectionId}/files/upload`, {
        method: 'POST',
        headers: { 'x-api-key': t.admin.key },
        body: form,
      });
      expect(res.status).toBe(400);
    });

    it('a malformed multipart body, or the name given twice -> 400 naming what is wrong, and nothing stored', async () => {
      const upload = (body: string | FormData, contentType?: string) =>
        fetch(`${t.url}/api/v1/collections/${collectionId}/files/upload`, {
          method: 'POST',
          headers: { 'x-api-key': t.admin.key, ...(contentType ? { 'content-type': contentType } : {}) },
          body,
        });
      const before = (await t.request('GET', `/api/v1/collections/${collectionId}/files?limit=100`)).body.total;
      const cut = [
        '--xyz',
        'Content-Disposition: form-data; name="file"; filename="cut.txt"',
        'Content-Type: text/plain',
        '',
        'half of it',
      ].join('\r\n');
      for (const [body, contentType] of [
        ['x', 'multipart/form-data'], // no boundary
        [cut, 'multipart/form-data; boundary=xyz'], // ends before its closing boundary
      ]) {
        const res = await upload(body, contentType);
        expect(res.status).toBe(400);
        const answer = (await res.json()) as { details: { fields: unknown[] } };
        expect(answer.details.fields).toEqual([
          { field: 'body', reason: expect.stringContaining('is not a well-formed multipart/form-data body') },
        ]);
      }
      const twice = new FormData();
      twice.append('name', 'first');
      twice.append('name', 'second');
      twice.append('file', new Blob(['hello']), 'twice.txt');
      const res = await upload(twice);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { details: { fields: unknown[] } }).details.fields).toEqual([
        { field: 'name', reason: 'is given more than once' },
      ]);
      expect((await t.request('GET', `/api/v1/collections/${collectionId}/files?limit=100`)).body.total).toBe(before);
    });

    it('an unknown collection or file -> 404', async () => {
      expect(
        (await t.request('POST', '/api/v1/collections/col_missing/files', { body: { name: 'a', url: 'https://example.com/' } })).status,
      ).toBe(404);
      expect((await t.request('GET', `/api/v1/collections/${collectionId}/files/fle_missing`)).status).toBe(404);
      expect((await t.request('GET', `/api/v1/collections/${collectionId}/files/fle_missing/content`)).status).toBe(404);
    });
  });
});
