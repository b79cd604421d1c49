import { startTestApp, TestApp, TestUser } from '../utils/test-app';

/**
 * Credentials through the REST door: typed, shared by role, never returned once written. How
 * nodes inject them at send time is in credentials-in-runs.e2e-spec.ts.
 */
describe('credentials API', () => {
  let t: TestApp;
  let user: TestUser;
  const SECRET = 'sk-live-0123456789abcdef';

  beforeAll(async () => {
    t = await startTestApp();
    user = await t.createUser('colleague');
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = (body: unknown, key?: string) => t.request('POST', '/api/v1/credentials', { body, key });

  it('creates a credential of each type and never returns a secret, in any answer', async () => {
    const bodies = [
      { name: 'bearer', type: 'bearer', secrets: { token: SECRET } },
      { name: 'basic', type: 'basic', settings: { username: 'alice' }, secrets: { password: SECRET } },
      { name: 'header', type: 'header', settings: { name: 'X-Api-Key' }, secrets: { value: SECRET } },
      { name: 'query', type: 'query', settings: { name: 'api_key' }, secrets: { value: SECRET } },
      {
        name: 'oauth',
        type: 'oauth2-client-credentials',
        settings: { tokenUrl: 'https://auth.example.com/token', clientId: 'client-1', scope: 'read' },
        secrets: { clientSecret: SECRET },
      },
    ];
    const answers: string[] = [];
    for (const body of bodies) {
      const created = await create(body);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        id: expect.stringMatching(/^crd_/),
        name: body.name,
        type: body.type,
        role: 'owner',
        secretFields: Object.keys(body.secrets),
      });
      answers.push(JSON.stringify(created.body), JSON.stringify((await t.request('GET', `/api/v1/credentials/${created.body.id}`)).body));
    }
    answers.push(JSON.stringify((await t.request('GET', '/api/v1/credentials?limit=100')).body));
    for (const answer of answers) expect(answer).not.toContain(SECRET);
  });

  it('refuses a credential that lacks or adds fields for its type, naming each', async () => {
    const refused = await create({ name: 'bad', type: 'basic', settings: { user: 'x' }, secrets: { token: 'y' } });
    expect(refused.status).toBe(400);
    expect(refused.body.details.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'secrets.password',
      'secrets.token',
      'settings.user',
      'settings.username',
    ]);
    const badUrl = await create({
      name: 'bad',
      type: 'oauth2-client-credentials',
      settings: { tokenUrl: 'ftp://x', clientId: 'c' },
      secrets: { clientSecret: 's' },
    });
    expect(badUrl.body.details.fields).toEqual([{ field: 'settings.tokenUrl', reason: 'must be an http(s) URL' }]);
    const unknownType = await create({ name: 'bad', type: 'ssh-key', secrets: { key: 'x' } });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.details.fields[0].field).toBe('type');
  });

  it('shares by role: viewer uses it and sees it, editor rotates it, only the owner deletes or shares', async () => {
    const created = await create({ name: 'shared', type: 'header', settings: { name: 'X-Api-Key' }, secrets: { value: SECRET } });
    const id = created.body.id as string;
    // No role: it does not exist for them.
    expect((await t.request('GET', `/api/v1/credentials/${id}`, { key: user.key })).status).toBe(404);
    expect((await t.request('PUT', `/api/v1/credentials/${id}/members/${user.id}`, { body: { role: 'viewer' } })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/credentials/${id}`, { key: user.key })).body).toMatchObject({
      role: 'viewer',
      settings: { name: 'X-Api-Key' },
    });
    const asViewer = await t.request('PATCH', `/api/v1/credentials/${id}`, {
      key: user.key,
      body: { secrets: { value: 'rotated-by-viewer' } },
    });
    expect(asViewer.status).toBe(403);
    expect((await t.request('PUT', `/api/v1/credentials/${id}/members/${user.id}`, { body: { role: 'editor' } })).status).toBe(200);
    const rotated = await t.request('PATCH', `/api/v1/credentials/${id}`, {
      key: user.key,
      body: { name: 'rotated', secrets: { value: 'new-secret-value' } },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ name: 'rotated', role: 'editor' });
    expect(JSON.stringify(rotated.body)).not.toContain('new-secret-value');
    expect((await t.request('DELETE', `/api/v1/credentials/${id}`, { key: user.key })).status).toBe(403);
    expect(
      (await t.request('PUT', `/api/v1/credentials/${id}/members/${t.admin.id}`, { key: user.key, body: { role: 'viewer' } })).status,
    ).toBe(403);
    expect((await t.request('DELETE', `/api/v1/credentials/${id}`)).status).toBe(204);
    expect((await t.request('GET', `/api/v1/credentials/${id}`)).status).toBe(404);
  });

  it('says where a credential is used: the workflows you can see, and how many you cannot', async () => {
    const created = await create({ name: 'used', type: 'bearer', secrets: { token: SECRET } });
    const id = created.body.id as string;
    await t.request('PUT', `/api/v1/credentials/${id}/members/${user.id}`, { body: { role: 'viewer' } });
    const node = { id: 'call', type: 'http-request', parameters: { method: 'GET', url: 'https://example.com/', credential: id } };
    const definition = {
      nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, node],
      edges: [{ from: 'trigger', to: 'call' }],
    };
    const mine = await t.request('POST', '/api/v1/workflows', { body: { name: 'mine', definition } });
    expect(mine.status).toBe(201);
    const theirs = await t.request('POST', '/api/v1/workflows', { key: user.key, body: { name: 'theirs', definition } });
    expect(theirs.status).toBe(201);
    const usage = await t.request('GET', `/api/v1/credentials/${id}/usage`);
    expect(usage.body).toEqual({ items: [{ workflowId: mine.body.id, name: 'mine', inDraft: true, inActiveVersion: false }], hidden: 1 });
  });
});
