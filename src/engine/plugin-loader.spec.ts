import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILT_IN_PLUGINS, loadNodeRegistry, PluginLoadError } from './plugin-loader';

const sdk = join(__dirname, '..', 'sdk');

/** A plugin folder written as plain CommonJS, as an operator's PLUGIN_PATHS folder may hold. */
function writePlugin(root: string, folder: string, body: string): string {
  mkdirSync(join(root, folder), { recursive: true });
  const file = join(root, folder, 'index.js');
  writeFileSync(file, body);
  return file;
}

const validPlugin = (type: string, version = 1) => `
  const { defineNode } = require(${JSON.stringify(sdk)});
  class Params {}
  module.exports = { default: defineNode({
    type: ${JSON.stringify(type)}, version: ${version}, displayName: 'X', description: 'x',
    parameters: Params, defaultRunMode: 'input', execute: (ctx) => ctx.input,
  }) };
`;

/** A plugin whose `note` parameter is documented as a template and validated by `validator`. */
const templatePlugin = (validator: string) => `
  const { defineNode, Parameter } = require(${JSON.stringify(sdk)});
  const validators = require(${JSON.stringify(require.resolve('class-validator'))});
  class Params {}
  Parameter({ description: 'a note', template: true })(Params.prototype, 'note');
  validators.${validator}()(Params.prototype, 'note');
  module.exports = { default: defineNode({
    type: 'noted', version: 1, displayName: 'X', description: 'x',
    parameters: Params, defaultRunMode: 'input', execute: (ctx) => ctx.params.note,
  }) };
`;

describe('loadNodeRegistry', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'wcs-plugins-'));
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('loads the built-in nodes with their parameter schemas', () => {
    const registry = loadNodeRegistry([BUILT_IN_PLUGINS]);
    const http = registry.get('http-request');
    expect(http?.definition.version).toBe(1);
    expect(http?.schema).toMatchObject({
      type: 'object',
      required: ['method', 'url'],
      additionalProperties: false,
      properties: {
        method: { enum: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], title: 'Method' },
        url: { type: 'string', minLength: 1 },
        headers: { type: 'string' },
        body: { type: 'string' },
        responseType: { enum: ['json', 'text'], default: 'json' },
      },
    });
    expect(registry.get('webhook-trigger')?.definition.trigger).toBe(true);
    expect(registry.get('list-files')?.templateParameters).toEqual(new Set(['instructions']));
    expect(registry.get('list-files')?.schema).toMatchObject({ required: ['collectionId'], properties: { offset: { default: '0' }, instructions: { default: '', 'x-template': true } } });
    expect(registry.get('get-file-contents')?.definition.defaultRunMode).toBe('input');
    for (const type of ['list-files', 'get-file-contents', 'search-collection', 'add-file']) {
      const node = registry.get(type)!;
      expect([type, node.schema]).toMatchObject([type, { properties: { collectionId: { type: 'string', 'x-dynamic-options': true } } }]);
      expect([type, [...node.optionLoaders.keys()]]).toEqual([type, ['collectionId']]);
    }
    expect(http?.optionLoaders.size).toBe(0);
    expect(JSON.stringify(http?.schema)).not.toContain('x-dynamic-options');
  });

  it('loads plugins from an extra folder and keeps each version', () => {
    writePlugin(root, 'shout', validPlugin('shout'));
    writePlugin(root, 'shout-v2', validPlugin('shout', 2));
    writePlugin(root, '_shared', 'throw new Error("not a plugin")');
    const registry = loadNodeRegistry([BUILT_IN_PLUGINS, root]);
    expect(registry.versionsOf('shout')).toEqual([1, 2]);
    expect(registry.get('shout')?.definition.version).toBe(2);
    expect(registry.get('shout', 1)?.definition.version).toBe(1);
  });

  it('refuses a duplicate type@version, naming both files', () => {
    const first = writePlugin(root, 'a', validPlugin('dup'));
    const second = writePlugin(root, 'b', validPlugin('dup'));
    expect(() => loadNodeRegistry([root])).toThrow(PluginLoadError);
    expect(() => loadNodeRegistry([root])).toThrow(`Plugin ${second}: dup@1 is already defined by ${first}`);
  });

  it('refuses a duplicate of a built-in node', () => {
    writePlugin(root, 'my-http', validPlugin('http-request'));
    expect(() => loadNodeRegistry([BUILT_IN_PLUGINS, root])).toThrow(/http-request@1 is already defined by .*plugins\/http-request\/index/);
  });

  it.each([
    ['not an object', 'module.exports = { default: 42 };', 'must be an object'],
    ['a bad type', validPlugin('Not Kebab'), 'type must be kebab-case'],
    ['unknown keys', validPlugin('x').replace("displayName: 'X'", "displayName: 'X', colour: 'red'"), 'unknown keys colour'],
    ['no execute', validPlugin('x').replace('execute: (ctx) => ctx.input,', ''), 'execute must be a function'],
    ['a throwing module', 'throw new Error("boom at load");', 'failed to load: boom at load'],
    ['a template parameter that is not text', templatePlugin('IsInt'), 'template parameters must be strings (@IsString()): note'],
  ])('refuses a plugin with %s, naming its file', (_, body, message) => {
    const file = writePlugin(root, 'bad', body);
    expect(() => loadNodeRegistry([root])).toThrow(`Plugin ${file}: `);
    expect(() => loadNodeRegistry([root])).toThrow(message);
  });

  it('takes a text parameter documented as a template', () => {
    writePlugin(root, 'noted', templatePlugin('IsString'));
    expect(loadNodeRegistry([root]).get('noted')?.templateParameters).toEqual(new Set(['note']));
  });

  it('refuses a plugin folder without an index', () => {
    mkdirSync(join(root, 'empty'));
    expect(() => loadNodeRegistry([root])).toThrow(`Plugin ${join(root, 'empty')}: no index.ts or index.js`);
  });

  it('refuses a PLUGIN_PATHS entry that does not exist', () => {
    expect(() => loadNodeRegistry([join(root, 'missing')])).toThrow('plugin folder does not exist');
  });
});
