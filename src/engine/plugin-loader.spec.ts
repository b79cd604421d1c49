import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isNodeError, isRoutedOutput } from '../sdk';
import { inputContext } from '../sdk/testing';
import { BUILT_IN_PLUGINS, loadNodeRegistry, PluginLoadError } from './plugin-loader';
import { SERVICE_PACKAGE, serviceModule } from './plugin-modules';

const sdk = join(__dirname, '..', 'sdk');

const repo = join(__dirname, '..', '..');

/** A plugin folder written as plain CommonJS, as an operator's PLUGIN_PATHS folder may hold. */
function writePlugin(root: string, folder: string, body: string, file = 'index.js'): string {
  const path = join(root, folder, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
  return path;
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
    expect(registry.get('list-files')?.schema).toMatchObject({
      required: ['collectionId'],
      properties: { offset: { default: '0' }, instructions: { default: '', 'x-template': true } },
    });
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

  it('skips node_modules beside the plugins', () => {
    writePlugin(root, 'shout', validPlugin('shout'));
    writePlugin(root, 'node_modules/some-library', 'throw new Error("not a plugin")');
    expect(
      loadNodeRegistry([root])
        .list()
        .map((n) => n.definition.type),
    ).toEqual(['shout']);
  });

  it('loads a plugin package from its package.json main, and says to build it when that is missing', () => {
    writePlugin(root, 'packaged', JSON.stringify({ name: 'packaged', private: true, main: 'dist/index.js' }), 'package.json');
    writePlugin(root, 'packaged', 'throw new Error("sources are not the entry")', 'index.js');
    const manifest = join(root, 'packaged', 'package.json');
    expect(() => loadNodeRegistry([root])).toThrow(
      `Plugin ${manifest}: "main" names dist/index.js, which does not exist: build the plugin (npm run build in ${join(root, 'packaged')})`,
    );
    writePlugin(root, 'packaged', validPlugin('packaged'), 'dist/index.js');
    expect(loadNodeRegistry([root]).get('packaged')?.source).toBe(join(root, 'packaged', 'dist', 'index.js'));
  });

  it('refuses a package.json main outside the plugin folder', () => {
    writePlugin(root, 'escaping', JSON.stringify({ name: 'escaping', main: '../elsewhere.js' }), 'package.json');
    writePlugin(root, '.', validPlugin('elsewhere'), 'elsewhere.js');
    expect(() => loadNodeRegistry([root])).toThrow(
      `Plugin ${join(root, 'escaping', 'package.json')}: "main" names ../elsewhere.js, outside the plugin's folder`,
    );
  });

  it('works with a plugin that carries its own copy of the SDK: docs, typed errors and routed outputs', async () => {
    for (const name of readdirSync(join(repo, 'src', 'sdk')).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
      mkdirSync(join(root, 'copied', 'sdk'), { recursive: true });
      copyFileSync(join(repo, 'src', 'sdk', name), join(root, 'copied', 'sdk', name));
    }
    writePlugin(
      root,
      'copied',
      `
      const { defineNode, NodeConfigurationError, Parameter, toOutput } = require('./sdk');
      class Params {}
      Parameter({ description: 'Where to send it', loadOptions: () => [] })(Params.prototype, 'target');
      module.exports = { default: defineNode({
        type: 'copied', version: 1, displayName: 'Copied', description: 'x', parameters: Params, defaultRunMode: 'input',
        execute: (ctx) => { if (ctx.input === null) throw new NodeConfigurationError('needs an input'); return toOutput('main', ctx.input); },
      }) };
    `,
    );
    const node = loadNodeRegistry([root]).get('copied')!;
    expect(node.schema).toMatchObject({ properties: { target: { description: 'Where to send it', 'x-dynamic-options': true } } });
    const thrown = await Promise.resolve()
      .then(() => node.definition.execute(inputContext({}, { input: null })))
      .catch((error: unknown) => error);
    expect(isNodeError(thrown) && [thrown.kind, thrown.retryable]).toEqual(['configuration', false]);
    expect(isRoutedOutput(node.definition.execute(inputContext({}, { input: 1 })))).toBe(true);
  });

  it('names the SDK export after the package, and shares only the SDK and the decorator packages', () => {
    expect(SERVICE_PACKAGE).toBe(JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).name);
    expect(serviceModule(`${SERVICE_PACKAGE}/sdk`)).toBe(require.resolve('../sdk'));
    expect(serviceModule('class-validator')).toBe(require.resolve('class-validator'));
    expect(serviceModule('class-transformer/cjs/decorators')).toBe(require.resolve('class-transformer/cjs/decorators'));
    for (const other of ['lodash', 'class-validator-extra', SERVICE_PACKAGE, './sdk']) expect(serviceModule(other)).toBeUndefined();
  });

  /**
   * In a plain Node process (jest resolves modules its own way): the plugin's node_modules holds an
   * SDK and a class-validator that refuse to load, so it loads only if it gets the service's.
   */
  it("gives code under a plugin root the service's SDK and class-validator in a real Node process", () => {
    const plugin = join(root, 'outside');
    writePlugin(root, 'outside', JSON.stringify({ name: 'outside', main: 'dist/index.js' }), 'package.json');
    writePlugin(
      root,
      'outside',
      `
      const sdk = require('${SERVICE_PACKAGE}/sdk');
      const { IsString, MaxLength } = require('class-validator');
      class Params {}
      sdk.Parameter({ description: 'A short word' })(Params.prototype, 'word');
      IsString()(Params.prototype, 'word');
      MaxLength(5)(Params.prototype, 'word');
      module.exports = { sdk, default: sdk.defineNode({
        type: 'outside', version: 1, displayName: 'Outside', description: 'x', parameters: Params, defaultRunMode: 'input', execute: () => null,
      }) };
    `,
      'dist/index.js',
    );
    writePlugin(
      root,
      `outside/node_modules/${SERVICE_PACKAGE}`,
      JSON.stringify({ name: SERVICE_PACKAGE, exports: { './sdk': './sdk.js' } }),
      'package.json',
    );
    writePlugin(root, `outside/node_modules/${SERVICE_PACKAGE}`, 'throw new Error("the plugin got its own SDK")', 'sdk.js');
    writePlugin(
      root,
      'outside/node_modules/class-validator',
      JSON.stringify({ name: 'class-validator', main: 'index.js' }),
      'package.json',
    );
    writePlugin(root, 'outside/node_modules/class-validator', 'throw new Error("the plugin got its own class-validator")', 'index.js');
    const script = `
      const { loadNodeRegistry } = require(${JSON.stringify(join(repo, 'src', 'engine', 'plugin-loader.ts'))});
      const node = loadNodeRegistry([${JSON.stringify(root)}]).get('outside');
      const sameSdk = require(${JSON.stringify(join(plugin, 'dist', 'index.js'))}).sdk === require(${JSON.stringify(join(repo, 'src', 'sdk', 'index.ts'))});
      process.stdout.write(JSON.stringify({ schema: node.schema, sameSdk }));
    `;
    const child = spawnSync(process.execPath, ['-r', join(repo, 'scripts', 'swc-register.js'), '-e', script], {
      cwd: plugin,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual({
      sameSdk: true,
      schema: {
        type: 'object',
        properties: { word: { description: 'A short word', type: 'string', maxLength: 5 } },
        required: ['word'],
        additionalProperties: false,
      },
    });
  });

  it("loads a plugin folder linked in from elsewhere, giving it the service's SDK like the others, in a real Node process", () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'wcs-linked-'));
    try {
      const plugin = join(elsewhere, 'linked');
      writePlugin(
        elsewhere,
        'linked',
        `
        const sdk = require('${SERVICE_PACKAGE}/sdk');
        class Params {}
        module.exports = { sdk, default: sdk.defineNode({
          type: 'linked', version: 1, displayName: 'Linked', description: 'x', parameters: Params, defaultRunMode: 'input', execute: () => null,
        }) };
      `,
      );
      writePlugin(
        elsewhere,
        `linked/node_modules/${SERVICE_PACKAGE}`,
        JSON.stringify({ name: SERVICE_PACKAGE, exports: { './sdk': './sdk.js' } }),
        'package.json',
      );
      writePlugin(elsewhere, `linked/node_modules/${SERVICE_PACKAGE}`, 'throw new Error("the plugin got its own SDK")', 'sdk.js');
      symlinkSync(plugin, join(root, 'linked'), 'dir');
      symlinkSync(join(elsewhere, 'missing'), join(root, 'dangling'), 'dir');
      const script = `
        const { loadNodeRegistry } = require(${JSON.stringify(join(repo, 'src', 'engine', 'plugin-loader.ts'))});
        try { loadNodeRegistry([${JSON.stringify(root)}]); } catch (error) { process.stdout.write(JSON.stringify({ dangling: error.message }) + '\\n'); }
        require('node:fs').unlinkSync(${JSON.stringify(join(root, 'dangling'))});
        const node = loadNodeRegistry([${JSON.stringify(root)}]).get('linked');
        const sameSdk = require(${JSON.stringify(join(plugin, 'index.js'))}).sdk === require(${JSON.stringify(join(repo, 'src', 'sdk', 'index.ts'))});
        process.stdout.write(JSON.stringify({ type: node.definition.type, sameSdk }));
      `;
      const child = spawnSync(process.execPath, ['-r', join(repo, 'scripts', 'swc-register.js'), '-e', script], {
        cwd: plugin,
        encoding: 'utf8',
        timeout: 60_000,
        env: { PATH: process.env.PATH ?? '' },
      });
      expect(child.stderr).toBe('');
      const [refused, loaded] = child.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(refused).toEqual({ dangling: `Plugin ${join(root, 'dangling')}: symbolic link to nothing` });
      expect(loaded).toEqual({ type: 'linked', sameSdk: true });
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
