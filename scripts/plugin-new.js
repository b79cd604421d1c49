#!/usr/bin/env node
// `npm run plugin:new -- <type> [--dir <folder>]`: scaffolds a node plugin that loads and passes its
// own test as generated: plugins/<type>/index.ts (the definition), <type>.parameters.ts (the
// parameter class, the node's only type declaration) and <type>.spec.ts. With --dir, the plugin is
// written into that folder instead (one listed in PLUGIN_PATHS).
const { existsSync, mkdirSync, writeFileSync } = require('node:fs');
const { join, relative, resolve, sep } = require('node:path');

const root = resolve(__dirname, '..');
/** The same rule the plugin loader applies. */
const TYPE_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

function main(argv) {
  const { type, dir } = parseArgs(argv);
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
    sdk: importPath(folder, join(root, 'src', 'sdk')),
  };
  mkdirSync(folder, { recursive: true });
  const files = {
    'index.ts': definition(names),
    [`${type}.parameters.ts`]: parameters(names),
    [`${type}.spec.ts`]: spec(names),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);

  const shown = relative(process.cwd(), folder);
  process.stdout.write(
    [
      `Created ${shown && !shown.startsWith('..') ? shown : folder}/`,
      ...Object.keys(files).map((name) => `  ${name}`),
      '',
      'Next:',
      dir
        ? `  add ${resolve(dir)} to PLUGIN_PATHS (a built service loads index.js: compile the plugin with tsc)`
        : `  node --no-node-snapshot node_modules/jest/bin/jest.js plugins/${type}   # its test passes as generated`,
      `  edit ${type}.parameters.ts (parameters) and index.ts (execute), then restart the service`,
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

/** A relative module path from `from` to `to`, with forward slashes, as an import needs. */
function importPath(from, to) {
  const path = relative(from, to).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
}

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
 * parameter optional.
 */
export class ${n.parametersClass} {
  @Parameter({
    displayName: 'Message',
    description: 'Text put in each output. Fixed, or an expression such as \`item.name\` or \`Hello \${item.name}\`.',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1000)
  message: string = 'Hello';
}
`;

const spec = (n) => `import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { NodeConfigurationError, NodeContext } from '${n.sdk}';
import ${n.camel} from './index';
import { ${n.parametersClass} } from './${n.type}.parameters';

/** The node is a plain function of its context: build one with what the test needs. */
function context(params: Partial<${n.parametersClass}>, item: unknown): NodeContext<${n.parametersClass}> {
  return {
    runMode: 'item',
    item,
    itemIndex: 0,
    params: Object.assign(new ${n.parametersClass}(), params),
    variables: {},
    nodes: {},
    collections: { listFiles: () => Promise.reject(new Error('not used')), getFileContent: () => Promise.reject(new Error('not used')) },
    http: { fetch: () => Promise.reject(new Error('not used')) },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    signal: new AbortController().signal,
    runId: 'run_test',
    workflowId: 'wfl_test',
    nodeId: '${n.type}',
  };
}

describe('${n.type} node', () => {
  it('outputs its message with what it received', async () => {
    const output = await ${n.camel}.execute(context({ message: 'Hi' }, { name: 'Ada' }));
    expect(output).toEqual({ message: 'Hi', received: { name: 'Ada' } });
  });

  it('fails as misconfigured without an input', async () => {
    await expect(Promise.resolve().then(() => ${n.camel}.execute(context({}, null)))).rejects.toBeInstanceOf(NodeConfigurationError);
  });

  it('validates its parameters', () => {
    expect(validateSync(plainToInstance(${n.parametersClass}, {}))).toEqual([]);
    const errors = validateSync(plainToInstance(${n.parametersClass}, { message: '' }));
    expect(errors.map((e) => e.property)).toEqual(['message']);
  });
});
`;

main(process.argv.slice(2));
