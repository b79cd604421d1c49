#!/usr/bin/env node
// `npm run plugin:new -- <type> [--dir <folder>]`: scaffolds a node plugin that loads and passes its
// own test as generated.
//
// Without --dir: plugins/<type>/ in this repository, built and tested with the service: index.ts
// (the definition), <type>.parameters.ts (the parameter class, the node's only type declaration)
// and <type>.spec.ts.
//
// With --dir: <folder>/<type>/ as a package of its own, for a folder listed in PLUGIN_PATHS:
// package.json (its own `build` and `test`), tsconfig.json, the same three files under src/, and
// node_modules/ holding links instead of downloads: `workflow-collection-service` points at this
// service (what npm makes of the `file:` dependency), and class-validator, class-transformer,
// TypeScript and the Node types point through it at the service's own copies. Only that first
// link knows where the service is. The built plugin needs none of them at run time: the service
// gives a plugin its own SDK and class-validator when loading it.
const { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } = require('node:fs');
const { dirname, join, relative, resolve, sep } = require('node:path');

const root = resolve(__dirname, '..');
const service = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** The same rule the plugin loader applies. */
const TYPE_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
/** What an outside plugin compiles and tests with, taken from the service's node_modules. */
const LINKED_PACKAGES = ['class-validator', 'class-transformer', 'typescript', '@types/node'];

function main(argv) {
  const { type, dir } = parseArgs(argv);
  // Built-in nodes compile with the service (importing the SDK by the same package name): a package of their own has no place there.
  if (dir && resolve(dir) === join(root, 'plugins'))
    fail('plugins/ holds the nodes built with the service: leave out --dir to write one there');
  const folder = join(dir ? resolve(dir) : join(root, 'plugins'), type);
  if (existsSync(folder)) fail(`${folder} already exists; pick another type or remove it`);
  // The loader refuses a second node of the same type@version at boot: say so now.
  if (existsSync(join(root, 'plugins', type))) fail(`a built-in node is already called ${type}`);

  const words = type.split('-');
  const pascal = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  const names = {
    type,
    displayName: words.map((w) => w[0].toUpperCase() + w.slice(1)).join(' '),
    parametersClass: `${pascal}Parameters`,
    camel: pascal[0].toLowerCase() + pascal.slice(1),
    outside: Boolean(dir),
    // Inside the repository and outside alike: tsconfig's paths, jest's moduleNameMapper and the
    // package's "exports" resolve the name to this service's SDK.
    sdk: `${service.name}/sdk`,
    testing: `${service.name}/sdk/testing`,
  };
  const sources = {
    'index.ts': definition(names),
    [`${type}.parameters.ts`]: parameters(names),
    [`${type}.spec.ts`]: spec(names),
  };
  const files = dir
    ? {
        'package.json': packageJson(names, folder),
        'tsconfig.json': tsconfig(),
        '.gitignore': 'node_modules/\ndist/\n',
        ...Object.fromEntries(Object.entries(sources).map(([name, text]) => [`src/${name}`, text])),
      }
    : sources;
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(folder, name)), { recursive: true });
    writeFileSync(join(folder, name), text);
  }
  if (dir) linkServicePackages(folder);

  const shown = relative(process.cwd(), folder);
  const unbuilt = dir && !existsSync(join(root, 'dist', 'src', 'sdk', 'index.d.ts'));
  process.stdout.write(
    [
      `Created ${shown && !shown.startsWith('..') ? shown : folder}/`,
      ...Object.keys(files).map((name) => `  ${name}`),
      ...(dir
        ? [`  node_modules/  links to this service (${root}) and its copies of ${LINKED_PACKAGES.join(', ')}: nothing to install`]
        : []),
      '',
      'Next:',
      ...(dir
        ? [
            ...(unbuilt ? [`  build the service first, the plugin compiles against its SDK: cd ${root} && npm run build`] : []),
            `  cd ${folder} && npm test   # builds dist/ with its own tsc and runs its spec: passes as generated`,
            `  edit src/${type}.parameters.ts (parameters) and src/index.ts (execute), then npm test again`,
            `  start the service with PLUGIN_PATHS=${resolve(dir)} (it loads dist/index.js, the package's main)`,
          ]
        : [
            `  node --no-node-snapshot node_modules/jest/bin/jest.js plugins/${type}   # its test passes as generated`,
            `  edit ${type}.parameters.ts (parameters) and index.ts (execute), then restart the service`,
          ]),
      '  GET /api/v1/node-types lists it once loaded',
      '',
    ].join('\n'),
  );
}

function parseArgs(argv) {
  const args = [...argv];
  let dir;
  const at = args.indexOf('--dir');
  if (at !== -1) {
    dir = args[at + 1];
    if (!dir) fail('--dir needs a folder');
    args.splice(at, 2);
  }
  if (args.length !== 1) fail('usage: npm run plugin:new -- <type> [--dir <folder>]   e.g. npm run plugin:new -- word-count');
  const [type] = args;
  if (!TYPE_PATTERN.test(type)) fail(`"${type}" is not a node type: use kebab-case, e.g. word-count`);
  return { type, dir };
}

/** The version range the service itself uses, so the plugin builds against the same API. */
function serviceRange(name) {
  const range = service.dependencies?.[name] ?? service.devDependencies?.[name];
  if (!range) fail(`the service's package.json does not list ${name}`);
  return range;
}

/**
 * Relative links, as npm makes for a `file:` dependency: the plugin and the service can move
 * together. When only the service moves, re-point node_modules/workflow-collection-service (and
 * the `file:` path in package.json); the other links follow it.
 */
function linkServicePackages(folder) {
  const modules = join(folder, 'node_modules');
  mkdirSync(join(modules, '@types'), { recursive: true });
  // 'junction' matters on Windows only (links to folders without admin rights); elsewhere it is ignored.
  symlinkSync(relative(modules, root), join(modules, service.name), 'junction');
  for (const name of LINKED_PACKAGES) {
    if (!existsSync(join(root, 'node_modules', name))) fail(`the service has no node_modules/${name}: run npm ci in ${root}`);
    const link = join(modules, name);
    symlinkSync(relative(dirname(link), join(modules, service.name, 'node_modules', name)), link, 'junction');
  }
}

const packageJson = (n, folder) =>
  `${JSON.stringify(
    {
      name: n.type,
      version: '0.1.0',
      private: true,
      description: `${n.displayName}: a node for ${service.name}, loaded from a PLUGIN_PATHS folder`,
      main: 'dist/index.js',
      scripts: {
        build: 'node node_modules/typescript/bin/tsc -p tsconfig.json',
        test: `npm run build && node --test dist/${n.type}.spec.js`,
      },
      // Build and test time only: at run time the service gives the plugin its own copies.
      devDependencies: {
        [service.name]: `file:${relative(folder, root).split(sep).join('/')}`,
        ...Object.fromEntries(LINKED_PACKAGES.map((name) => [name, serviceRange(name)])),
      },
    },
    null,
    2,
  )}\n`;

const tsconfig = () =>
  `${JSON.stringify(
    {
      compilerOptions: {
        // node16 reads the service's "exports" (the SDK at ${service.name}/sdk) and emits CommonJS.
        module: 'node16',
        moduleResolution: 'node16',
        target: 'ES2022',
        lib: ['ES2023'],
        types: ['node'],
        strict: true,
        strictPropertyInitialization: false,
        // The decorators of class-validator and @Parameter(), compiled as the service compiles its own.
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        useDefineForClassFields: false,
        esModuleInterop: true,
        skipLibCheck: true,
        sourceMap: true,
        rootDir: 'src',
        outDir: 'dist',
      },
      include: ['src'],
    },
    null,
    2,
  )}\n`;

function fail(message) {
  process.stderr.write(`plugin:new: ${message}\n`);
  process.exit(1);
}

const definition = (n) => `import { defineNode, NodeConfigurationError } from '${n.sdk}';
import { ${n.parametersClass} } from './${n.type}.parameters';

export interface ${n.parametersClass.replace(/Parameters$/, 'Output')} {
  message: string;
  /** What the node received: its item in run mode item, its whole input in run mode input. */
  received: unknown;
}

export default defineNode({
  // Stable: workflows refer to the node by type and version. Change the version when a change
  // would break saved workflows, and keep the old version's folder.
  type: '${n.type}',
  version: 1,
  displayName: '${n.displayName}',
  description: 'Say in one sentence what the node does and what it outputs.',
  parameters: ${n.parametersClass},
  defaultRunMode: 'item',
  // ctx.params is typed by the parameter class and already validated against it, whichever mode
  // (fixed, expression, AI Decide) each value came from.
  execute(ctx): ${n.parametersClass.replace(/Parameters$/, 'Output')} {
    const received = ctx.runMode === 'item' ? ctx.item : ctx.input;
    if (received === null || received === undefined) {
      // Configuration errors are never retried; throw NodeUpstreamError for a service that failed
      // (retried when the workflow asks for retries), NodeTimeoutError when time ran out.
      throw new NodeConfigurationError('${n.displayName} needs an input: connect a node that outputs something');
    }
    return { message: ctx.params.message, received };
  },
});
`;

const parameters = (n) => `import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { Parameter } from '${n.sdk}';

/**
 * The node's parameters: class-validator decorators validate them, @Parameter documents them, and
 * the JSON Schema the builder and AI Decide see is derived from both. A default value makes a
 * parameter optional; the first of \`schema.examples\` is what the spec runs the node with.
 */
export class ${n.parametersClass} {
  @Parameter({
    displayName: 'Message',
    description: 'Text put in each output. Fixed, or an expression such as \`item.name\` or \`Hello \${item.name}\`.',
    schema: { examples: ['Hello'] },
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1000)
  message: string = 'Hello';
}
`;

/**
 * Checks that hold for any node, so the spec keeps passing while the node is edited into another
 * one: add tests of what yours does below them. Outside packages run it with node:test (no test
 * framework to install); in the repository jest runs it, so only the import of describe/it differs.
 */
const spec = (n) => `import assert from 'node:assert/strict';
${n.outside ? "import { describe, it } from 'node:test';\n" : ''}import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import { isNodeError, isRoutedOutput, isWaitRequest, parameterDocs } from '${n.sdk}';
import { inputContext, itemContext } from '${n.testing}';
import ${n.camel} from './index';

const Parameters = ${n.camel}.parameters;

/** Each parameter at the first of its \`schema.examples\`, or else at its default. */
function exampleParameters() {
  const params = plainToInstance(Parameters, {}) as unknown as Record<string, unknown>;
  for (const [name, doc] of parameterDocs(Parameters)) {
    const examples = doc.schema?.examples;
    if (Array.isArray(examples) && examples.length > 0) params[name] = examples[0];
  }
  return params as unknown as InstanceType<typeof Parameters>;
}

describe('${n.type} node', () => {
  it('is a well-formed node definition', () => {
    assert.equal(${n.camel}.type, '${n.type}');
    assert.ok(Number.isInteger(${n.camel}.version) && ${n.camel}.version >= 1, 'version is a positive integer');
    assert.ok(${n.camel}.displayName.trim() && ${n.camel}.description.trim(), 'displayName and description say what the node is');
    assert.ok(['input', 'item'].includes(${n.camel}.defaultRunMode), 'defaultRunMode is input or item');
  });

  it('documents every parameter it validates, and validates every parameter it documents', () => {
    const validated = new Set(getMetadataStorage().getTargetValidationMetadatas(Parameters, '', true, false).map((rule) => rule.propertyName));
    const documented = new Set([...parameterDocs(Parameters)].filter(([, doc]) => doc.description.trim()).map(([name]) => name));
    assert.deepEqual([...validated].filter((name) => !documented.has(name)), [], 'give these a @Parameter({ description })');
    assert.deepEqual([...documented].filter((name) => !validated.has(name)), [], 'give these a class-validator decorator');
  });

  it('accepts its defaults and examples', () => {
    const errors = validateSync(exampleParameters()).map((error) => \`\${error.property}: \${Object.values(error.constraints ?? {}).join(', ')}\`);
    assert.deepEqual(errors, [], 'a parameter without a default needs @Parameter({ schema: { examples: [...] } })');
  });

  it('runs with its examples and outputs JSON', async () => {
    const params = exampleParameters();
    const sample = { name: 'Ada', text: 'The quick brown fox jumps over the lazy dog' };
    const ctx = ${n.camel}.defaultRunMode === 'item' ? itemContext(params, { item: sample }) : inputContext(params, { input: [sample] });
    let output: unknown;
    try {
      output = await ${n.camel}.execute(ctx);
    } catch (error) {
      assert.fail(isNodeError(error) ? \`the node refused the sample: \${error.message}\` : (error as Error));
    }
    const values = isRoutedOutput(output) ? Object.values(output.outputs) : isWaitRequest(output) ? [output.output] : [output];
    for (const value of values) assert.deepEqual(JSON.parse(JSON.stringify(value ?? null)), value ?? null, 'the output is JSON');
  });

  // Tests of what the node does go here, e.g.:
  // it('counts words', async () => {
  //   assert.deepEqual(await ${n.camel}.execute(itemContext({ ...exampleParameters(), text: 'a b c' }, { item: null })), { count: 3 });
  // });
});
`;

main(process.argv.slice(2));
