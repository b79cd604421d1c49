import { bothQueues } from '../utils/queues';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';

describe.each(bothQueues('foundation'))('foundation over real HTTP, on $name', (queue) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ ...(await queue.env()), BODY_LIMIT_BYTES: '65536' });
  });
  afterAll(async () => {
    await t?.close();
    await queue.cleanup();
  });

  describe('API keys', () => {
    it('creates a key, authenticates with both headers, lists it without the secret, revokes it', async () => {
      const user = await t.createUser('key-owner');
      const created = await t.request('POST', '/api/v1/api-keys', { key: user.key, body: { name: 'laptop' } });
      expect(created.status).toBe(201);
      const secret: string = created.body.key;
      expect(secret).toMatch(/^wcs_[A-Za-z0-9_-]{43}$/);
      expect(created.body.prefix).toBe(secret.slice(0, 12));

      expect((await t.request('GET', '/api/v1/me', { key: secret })).body.id).toBe(user.id);
      const bearer = await t.request('GET', '/api/v1/me', { key: null, headers: { authorization: `Bearer ${secret}` } });
      expect(bearer.status).toBe(200);
      expect(bearer.body.id).toBe(user.id);

      const listed = await t.request('GET', '/api/v1/api-keys', { key: user.key });
      expect(listed.status).toBe(200);
      expect(listed.body.items).toHaveLength(2);
      expect(JSON.stringify(listed.body)).not.toContain(secret);
      const laptop = listed.body.items.find((k: { name: string }) => k.name === 'laptop');
      expect(laptop.lastUsedAt).not.toBeNull();

      expect((await t.request('DELETE', `/api/v1/api-keys/${created.body.id}`, { key: user.key })).status).toBe(204);
      const revoked = await t.request('GET', '/api/v1/me', { key: secret });
      expect(revoked.status).toBe(401);
      expect(revoked.body).toMatchObject({ code: 'UNAUTHENTICATED', requestId: expect.any(String) });
      expect((await t.request('GET', '/api/v1/me', { key: user.key })).status).toBe(200);
    });

    it('answers 401 with the error body for a missing or unknown key', async () => {
      const missing = await t.request('GET', '/api/v1/collections', { key: null });
      expect(missing.status).toBe(401);
      expect(missing.body.code).toBe('UNAUTHENTICATED');
      expect((await t.request('GET', '/api/v1/collections', { key: 'wcs_nope' })).status).toBe(401);
    });

    it('cannot revoke another user key (not found)', async () => {
      const a = await t.createUser('a');
      const b = await t.createUser('b');
      const keys = await t.request('GET', '/api/v1/api-keys', { key: a.key });
      const res = await t.request('DELETE', `/api/v1/api-keys/${keys.body.items[0].id}`, { key: b.key });
      expect(res.status).toBe(404);
      expect((await t.request('GET', '/api/v1/me', { key: a.key })).status).toBe(200);
    });

    it('lets only admins create users', async () => {
      const user = await t.createUser('plain');
      const res = await t.request('POST', '/api/v1/users', { key: user.key, body: { name: 'x' } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    });
  });

  describe('collection roles', () => {
    let owner: TestUser;
    let editor: TestUser;
    let viewer: TestUser;
    let stranger: TestUser;

    beforeAll(async () => {
      [owner, editor, viewer, stranger] = await Promise.all(['owner', 'editor', 'viewer', 'stranger'].map((n) => t.createUser(n)));
    });

    async function sharedCollection(): Promise<string> {
      const created = await t.request('POST', '/api/v1/collections', { key: owner.key, body: { name: 'Shared' } });
      const id = created.body.id;
      await t.request('PUT', `/api/v1/collections/${id}/members/${editor.id}`, { key: owner.key, body: { role: 'editor' } });
      await t.request('PUT', `/api/v1/collections/${id}/members/${viewer.id}`, { key: owner.key, body: { role: 'viewer' } });
      return id;
    }

    const who = () => ({ owner, editor, viewer, stranger });
    type Who = keyof ReturnType<typeof who>;
    const operations: [string, (id: string) => [string, string, unknown?], Record<Who, number>][] = [
      ['get', (id) => ['GET', `/api/v1/collections/${id}`], { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      ['stats', (id) => ['GET', `/api/v1/collections/${id}/stats`], { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      ['list members', (id) => ['GET', `/api/v1/collections/${id}/members`], { owner: 200, editor: 200, viewer: 200, stranger: 404 }],
      [
        'share',
        (id) => ['PUT', `/api/v1/collections/${id}/members/${stranger.id}`, { role: 'viewer' }],
        { owner: 200, editor: 403, viewer: 403, stranger: 404 },
      ],
      [
        'unshare',
        (id) => ['DELETE', `/api/v1/collections/${id}/members/${viewer.id}`],
        { owner: 204, editor: 403, viewer: 403, stranger: 404 },
      ],
      ['delete', (id) => ['DELETE', `/api/v1/collections/${id}`], { owner: 204, editor: 403, viewer: 403, stranger: 404 }],
    ];

    for (const [name, build, expected] of operations) {
      for (const role of Object.keys(expected) as Who[]) {
        it(`${name} as ${role} -> ${expected[role]}`, async () => {
          const id = await sharedCollection();
          const [method, path, body] = build(id);
          const res = await t.request(method, path, { key: who()[role].key, body });
          expect(res.status).toBe(expected[role]);
          if (expected[role] >= 400) expect(res.body.code).toBe(expected[role] === 404 ? 'NOT_FOUND' : 'FORBIDDEN');
        });
      }
    }

    it('lists only the collections the caller holds a role on, with that role', async () => {
      const id = await sharedCollection();
      const asViewer = await t.request('GET', '/api/v1/collections?limit=100', { key: viewer.key });
      expect(asViewer.body.items.find((c: { id: string }) => c.id === id)).toMatchObject({ role: 'viewer' });
      const asStranger = await t.request('GET', '/api/v1/collections?limit=100', { key: stranger.key });
      expect(asStranger.body.items.map((c: { id: string }) => c.id)).not.toContain(id);
    });

    it('keeps at least one owner', async () => {
      const id = await sharedCollection();
      const res = await t.request('DELETE', `/api/v1/collections/${id}/members/${owner.id}`, { key: owner.key });
      expect(res.status).toBe(409);
      const demote = await t.request('PUT', `/api/v1/collections/${id}/members/${owner.id}`, {
        key: owner.key,
        body: { role: 'viewer' },
      });
      expect(demote.status).toBe(409);
    });

    it('refuses an unknown user or role when sharing', async () => {
      const id = await sharedCollection();
      const unknown = await t.request('PUT', `/api/v1/collections/${id}/members/usr_nobody`, {
        key: owner.key,
        body: { role: 'viewer' },
      });
      expect(unknown.status).toBe(404);
      const badRole = await t.request('PUT', `/api/v1/collections/${id}/members/${viewer.id}`, {
        key: owner.key,
        body: { role: 'admin' },
      });
      expect(badRole.status).toBe(400);
      expect(badRole.body.details.fields).toEqual([{ field: 'role', reason: expect.stringContaining('role') }]);
    });
  });

  describe('collections CRUD and validation', () => {
    it('creates with a trimmed name and returns the documented shape', async () => {
      const res = await t.request('POST', '/api/v1/collections', { body: { name: '  Research  ' } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^col_[0-9a-z]{25}$/),
        name: 'Research',
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: expect.stringMatching(/Z$/),
        role: 'owner',
      });
      const stats = await t.request('GET', `/api/v1/collections/${res.body.id}/stats`);
      expect(stats.body).toMatchObject({ files: { total: 0 }, chunks: 0, bytes: 0 });
    });

    it.each([
      [{}, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'ok', extra: true }, 'extra'],
    ])('refuses %j naming the field %s', async (body, field) => {
      const res = await t.request('POST', '/api/v1/collections', { body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
      expect(res.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('pages with offset and limit and reports the total', async () => {
      const user = await t.createUser('pager');
      for (let i = 0; i < 5; i++) {
        await t.request('POST', '/api/v1/collections', { key: user.key, body: { name: `c${i}` } });
      }
      const page = await t.request('GET', '/api/v1/collections?offset=1&limit=2', { key: user.key });
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(5);
      expect(page.body.items.map((c: { name: string }) => c.name)).toEqual(['c3', 'c2']);
      const bad = await t.request('GET', '/api/v1/collections?limit=101&offset=-1', { key: user.key });
      expect(bad.status).toBe(400);
      expect(bad.body.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['limit', 'offset']);
      // Past what a number holds exactly: refused, not rounded or handed to the store to overflow.
      for (const offset of ['99999999999999999999999', '9007199254740993', '9223372036854775808']) {
        const huge = await t.request('GET', `/api/v1/collections?offset=${offset}`, { key: user.key });
        expect(huge.status).toBe(400);
        expect(huge.body.details.fields).toEqual([{ field: 'offset', reason: expect.stringContaining('must not be greater than') }]);
      }
      expect((await t.request('GET', `/api/v1/collections?offset=${Number.MAX_SAFE_INTEGER}`, { key: user.key })).status).toBe(200);
    });

    it('answers 404 for an unknown collection', async () => {
      const res = await t.request('GET', '/api/v1/collections/col_missing');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('col_missing') });
    });
  });

  describe('HTTP hygiene', () => {
    it('answers malformed JSON with 400 MALFORMED_JSON', async () => {
      const res = await t.request('POST', '/api/v1/collections', {
        rawBody: '{"name": ',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('MALFORMED_JSON');
    });

    it('answers a body that is not JSON with 415 saying what to send', async () => {
      const res = await t.request('POST', '/api/v1/collections', {
        rawBody: '<name>x</name>',
        headers: { 'content-type': 'application/xml' },
      });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining('application/xml') });
      expect(res.body.message).toContain('Content-Type: application/json');
      const text = await t.request('POST', '/api/v1/collections', { rawBody: 'name', headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
    });

    it('answers an unknown route with a JSON 404', async () => {
      const res = await t.request('GET', '/api/v1/nothing-here');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', requestId: expect.any(String) });
    });

    it('answers a path with a malformed escape with 400 and the error body', async () => {
      for (const path of ['/api/v1/collections/%E0', '/console/runs/%E0']) {
        const res = await t.request('GET', path);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          code: 'VALIDATION_FAILED',
          message: expect.stringContaining('Malformed request'),
          details: { fields: [{ field: 'url', reason: expect.any(String) }] },
          requestId: res.headers.get('x-request-id'),
        });
      }
    });

    it('answers a known path with another method with 405 and Allow', async () => {
      const res = await t.request('PATCH', '/api/v1/collections');
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, POST');
      expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
    });

    it('answers an oversized body with 413', async () => {
      const res = await t.request('POST', '/api/v1/collections', { body: { name: 'x'.repeat(70_000) } });
      expect(res.status).toBe(413);
      expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('echoes a request id and accepts a sane incoming one', async () => {
      const res = await t.request('GET', '/api/v1/collections/col_missing', { headers: { 'x-request-id': 'trace-123' } });
      expect(res.headers.get('x-request-id')).toBe('trace-123');
      expect(res.body.requestId).toBe('trace-123');
    });

    it('serves health, readiness and OpenAPI without a key', async () => {
      expect((await t.request('GET', '/health', { key: null })).body).toEqual({ status: 'ok' });
      const ready = await t.request('GET', '/health/ready', { key: null });
      expect(ready.status).toBe(200);
      expect(ready.body.info.store.status).toBe('up');
      expect(ready.body.info.queue.status).toBe('up');
      expect(ready.body.info.index.status).toBe('up');
      const docs = await t.request('GET', '/docs/json', { key: null });
      expect(docs.status).toBe(200);
      expect(docs.body.paths['/api/v1/collections']).toBeDefined();
    });
  });
});
