import { startTestApp, TestApp } from '../utils/test-app';

/** The canvas saves where the user put each node: a node's `position` is kept as given, and checked. */
describe('workflow definitions: node positions', () => {
  let t: TestApp;
  let id: string;
  beforeAll(async () => {
    t = await startTestApp();
    id = (await t.request('POST', '/api/v1/workflows', { body: { name: 'Drawn' } })).body.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const definition = (position: unknown) => ({
    nodes: [
      { id: 'trigger', type: 'webhook-trigger', parameters: {}, position },
      { id: 'tidy', type: 'set', parameters: { fields: { ok: true } } },
    ],
    edges: [{ from: 'trigger', to: 'tidy' }],
  });

  it('returns the positions a PUT saved, in the draft and in a published version', async () => {
    const saved = await t.request('PUT', `/api/v1/workflows/${id}`, { body: { definition: definition({ x: 120.5, y: -40 }) } });
    expect(saved.status).toBe(200);
    const read = await t.request('GET', `/api/v1/workflows/${id}`);
    expect(read.body.definition.nodes[0].position).toEqual({ x: 120.5, y: -40 });
    expect(read.body.definition.nodes[1].position).toBeUndefined();

    const published = await t.request('POST', `/api/v1/workflows/${id}/publish`);
    expect(published.status).toBe(201);
    const version = await t.request('GET', `/api/v1/workflows/${id}/versions/${published.body.version}`);
    expect(version.body.definition.nodes[0].position).toEqual({ x: 120.5, y: -40 });
  });

  it.each([
    ['a number too large to be finite', '{"x": 1e999, "y": 0}', 'definition.nodes[0].position.x'],
    ['a string', '{"x": 0, "y": "10"}', 'definition.nodes[0].position.y'],
    ['a missing coordinate', '{"x": 0}', 'definition.nodes[0].position.y'],
    ['a field besides x and y', '{"x": 0, "y": 0, "z": 1}', 'definition.nodes[0].position.z'],
  ])('refuses %s, naming the field', async (_, position, field) => {
    const body = JSON.stringify({ definition: definition('__POSITION__') }).replace('"__POSITION__"', position);
    const refused = await t.request('PUT', `/api/v1/workflows/${id}`, { rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(refused.status).toBe(400);
    expect(refused.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect((await t.request('GET', `/api/v1/workflows/${id}`)).body.definition.nodes[0].position).toEqual({ x: 120.5, y: -40 });
  });
});
