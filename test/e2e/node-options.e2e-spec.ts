import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp, TestUser } from '../utils/test-app';
import { createCollection } from './collections-files.helpers';

const sdk = join(__dirname, '..', '..', 'src', 'sdk');

/** A plugin whose parameters' options fail in each way the endpoint tells apart. */
const probePlugin = `
  const { defineNode, NodeConfigurationError, NodeStopError, NodeUpstreamError, Parameter } = require(${JSON.stringify(sdk)});
  class Params {}
  Parameter({ description: 'from a catalogue that is down', loadOptions: () => { throw new NodeUpstreamError('The catalogue answered 503', { status: 503 }); } })(Params.prototype, 'catalogue');
  Parameter({ description: 'needs a setting', loadOptions: () => { throw new NodeConfigurationError('Set CATALOGUE_URL to list the catalogue', { details: { setting: 'CATALOGUE_URL' } }); } })(Params.prototype, 'unset');
  Parameter({ description: 'refuses on purpose', loadOptions: () => { throw new NodeStopError('The catalogue is closed today'); } })(Params.prototype, 'closed');
  Parameter({ description: 'a bug', loadOptions: async () => { throw new Error('token=hunter2 leaked from /srv/internal'); } })(Params.prototype, 'broken');
  Parameter({ description: 'not options', loadOptions: () => [{ value: 'a', label: 1 }] })(Params.prototype, 'malformed');
  Parameter({ description: 'what the context offers', loadOptions: async (ctx) => [
    { value: ctx.signal instanceof AbortSignal && !ctx.signal.aborted, label: 'signal' },
    { value: (await ctx.collections.listCollections({ offset: 0, limit: 1 })).total, label: 'collections', description: 'visible to the caller' },
  ] })(Params.prototype, 'context');
  module.exports = { default: defineNode({
    type: 'options-probe', version: 1, displayName: 'Options probe', description: 'x',
    parameters: Params, defaultRunMode: 'input', execute: () => null,
  }) };
`;

/**
 * Dynamic options of node parameters through the real HTTP door: the collection dropdowns of the
 * built-in nodes list what the caller can see, and the failures of a plugin's loadOptions map as a
 * node's do in a run: configuration 400, stopped 422, upstream 502, timeout 504, or a 500 that
 * says nothing of the cause.
 */
describe('GET /api/v1/node-types/:type/:version/parameters/:name/options', () => {
  let t: TestApp;
  let pluginRoot: string;
  let ann: TestUser;
  let bob: TestUser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    pluginRoot = mkdtempSync(join(tmpdir(), 'wcs-options-'));
    mkdirSync(join(pluginRoot, 'options-probe'));
    writeFileSync(join(pluginRoot, 'options-probe', 'index.js'), probePlugin);
    t = await startTestApp({ PLUGIN_PATHS: pluginRoot });
    ann = await t.createUser('ann');
    bob = await t.createUser('bob');
    ids.annNotes = await createCollection(t, 'Ann notes', ann.key);
    ids.bobSecrets = await createCollection(t, 'Bob secrets', bob.key);
    ids.team = await createCollection(t, 'team handbook', bob.key);
    expect(
      (await t.request('PUT', `/api/v1/collections/${ids.team}/members/${ann.id}`, { body: { role: 'viewer' }, key: bob.key })).status,
    ).toBe(200);
  });

  afterAll(async () => {
    await t?.close();
    rmSync(pluginRoot, { recursive: true, force: true });
  });

  const options = (path: string, key?: string | null) => t.request('GET', `/api/v1/node-types/${path}/options`, { key });

  it('marks the parameters that have dynamic options in the node types', async () => {
    const types = await t.request('GET', '/api/v1/node-types', { key: ann.key });
    const byType = new Map<string, { parameters: { properties: Record<string, Record<string, unknown>> } }>(
      types.body.items.map((n: { type: string }) => [n.type, n]),
    );
    for (const type of ['list-files', 'get-file-contents', 'search-collection', 'add-file']) {
      expect([type, byType.get(type)?.parameters.properties.collectionId['x-dynamic-options']]).toEqual([type, true]);
    }
    expect(byType.get('http-request')?.parameters.properties.url).not.toHaveProperty('x-dynamic-options');
    expect(byType.get('list-files')?.parameters.properties.offset).not.toHaveProperty('x-dynamic-options');
  });

  it('lists the collections each caller can see, by name, with the id as value', async () => {
    const forAnn = await options('list-files/1/parameters/collectionId', ann.key);
    expect(forAnn.status).toBe(200);
    expect(forAnn.body).toEqual({
      items: [
        { value: ids.annNotes, label: 'Ann notes', description: `${ids.annNotes} (owner)` },
        { value: ids.team, label: 'team handbook', description: `${ids.team} (viewer)` },
      ],
    });
    const forBob = await options('search-collection/1/parameters/collectionId', bob.key);
    expect(forBob.body.items.map((o: { value: string }) => o.value)).toEqual([ids.bobSecrets, ids.team]);
    // Adding a file needs the editor role: Ann only sees her own collection there.
    const addable = await options('add-file/1/parameters/collectionId', ann.key);
    expect(addable.body.items.map((o: { label: string }) => o.label)).toEqual(['Ann notes']);
  });

  it('gives the plugin a context acting as the caller, with a live signal', async () => {
    const res = await options('options-probe/1/parameters/context', ann.key);
    expect(res).toMatchObject({
      status: 200,
      body: {
        items: [
          { value: true, label: 'signal' },
          { value: 2, label: 'collections', description: 'visible to the caller' },
        ],
      },
    });
  });

  it('answers 404 for an unknown type, version or parameter, and for a parameter without loadOptions', async () => {
    for (const path of [
      'no-such-node/1/parameters/collectionId',
      'list-files/2/parameters/collectionId',
      'list-files/one/parameters/collectionId',
      'list-files/1/parameters/nope',
    ]) {
      const res = await options(path, ann.key);
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    const fixed = await options('list-files/1/parameters/offset', ann.key);
    expect(fixed.status).toBe(404);
    expect(fixed.body.message).toBe('Parameter offset of list-files@1 has no dynamic options: its @Parameter() declares no loadOptions');
  });

  it('answers 400 when the plugin says it is set up wrongly, and 422 when it refuses on purpose, with its message', async () => {
    const unset = await options('options-probe/1/parameters/unset', ann.key);
    expect(unset).toMatchObject({
      status: 400,
      body: { code: 'NODE_CONFIGURATION', message: 'Set CATALOGUE_URL to list the catalogue', details: { setting: 'CATALOGUE_URL' } },
    });
    const closed = await options('options-probe/1/parameters/closed', ann.key);
    expect(closed).toMatchObject({ status: 422, body: { code: 'WORKFLOW_STOPPED', message: 'The catalogue is closed today' } });
  });

  it('answers 502 when the plugin says an upstream failed, and 500 without internals for anything else', async () => {
    const upstream = await options('options-probe/1/parameters/catalogue', ann.key);
    expect(upstream).toMatchObject({
      status: 502,
      body: { code: 'UPSTREAM_FAILED', message: 'The catalogue answered 503', details: { status: 503 } },
    });
    for (const name of ['broken', 'malformed']) {
      const res = await options(`options-probe/1/parameters/${name}`, ann.key);
      expect([name, res.status, res.body.code, res.body.message]).toEqual([name, 500, 'INTERNAL', 'Internal server error']);
      expect(JSON.stringify(res.body)).not.toMatch(/hunter2|internal\b|label/);
      expect(res.body.requestId).toEqual(expect.any(String));
    }
  });

  it('needs an API key', async () => {
    expect((await options('list-files/1/parameters/collectionId', null)).status).toBe(401);
  });

  it('documents the answer in the OpenAPI document', async () => {
    const doc = await t.request('GET', '/docs/json', { key: null });
    const operation = doc.body.paths['/api/v1/node-types/{type}/{version}/parameters/{name}/options'].get;
    const ref = operation.responses['200'].content['application/json'].schema.$ref as string;
    const schema = doc.body.components.schemas[ref.split('/').pop()!];
    expect(schema).toMatchObject({ required: ['items'], properties: { items: { type: 'array' } } });
    const item = doc.body.components.schemas[schema.properties.items.items.$ref.split('/').pop()];
    expect(item).toMatchObject({
      required: ['value', 'label'],
      properties: { value: { oneOf: expect.any(Array) }, label: { type: 'string' }, description: { type: 'string' } },
    });
  });
});
