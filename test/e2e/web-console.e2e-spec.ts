import { buildConsole } from '../../scripts/build-console';
import { startTestApp, TestApp } from '../utils/test-app';

/**
 * How the app serves the web console: the built page and its hashed assets, read once, public,
 * outside the OpenAPI document; client-side routes get the page, a missing asset never does.
 */
describe('web console: served by the app at /console', () => {
  let t: TestApp;
  let built: { script: string; style: string };

  beforeAll(async () => {
    built = await buildConsole();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(t.url + path, { headers });

  it.each(['/console', '/console/', '/console/runs/run_123', '/console/collections/col_1?status=indexed'])(
    'answers %s with the page, uncached, without an API key',
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await res.text();
      expect(html).toContain(`<script type="module" src="/console/assets/${built.script}"></script>`);
      expect(html).toContain(`href="/console/assets/${built.style}"`);
    },
  );

  it('serves the hashed bundle and stylesheet with their types, cacheable for good', async () => {
    const script = await get(`/console/assets/${built.script}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await script.text()).length).toBeGreaterThan(1000);
    const style = await get(`/console/assets/${built.style}`);
    expect(style.status).toBe(200);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await style.text()).toContain('.badge');
  });

  it.each(['/console/assets/app-OLDHASH.js', '/console/assets/nested/app.js', '/console/assets/'])(
    'answers a missing asset %s with the JSON 404, not the page',
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', requestId: expect.any(String) });
    },
  );

  it('accepts only GET and HEAD', async () => {
    expect((await fetch(`${t.url}/console`, { method: 'HEAD' })).status).toBe(200);
    const post = await fetch(`${t.url}/console/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(405);
  });

  it('stays out of the OpenAPI document', async () => {
    const doc = await t.request('GET', '/docs/json', { key: null });
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths).filter((path) => path.startsWith('/console'))).toEqual([]);
  });
});
