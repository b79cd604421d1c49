import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { NodeDefinition } from '../sdk';
import { NodeRegistry, PluginLoadError, RegisteredNode } from './node-registry';
import { parametersSchema } from './parameter-schema';
import { shareServiceModules } from './plugin-modules';

/** Compiled code (dist/) can only load `.js`; jest and the swc register hook load `.ts` too. */
const RUNNING_FROM_SOURCES = __filename.endsWith('.ts');

/** `plugins/` beside `src/`: in the repository for sources, `dist/plugins` once compiled. */
export const BUILT_IN_PLUGINS = resolve(__dirname, '..', '..', 'plugins');

const TYPE_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const KNOWN_KEYS = new Set([
  'type',
  'version',
  'displayName',
  'description',
  'parameters',
  'defaultRunMode',
  'trigger',
  'outputs',
  'idempotent',
  'loop',
  'respond',
  'execute',
]);

/** Output names appear in edges and run records: short and plain. */
const OUTPUT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export { PluginLoadError };

/**
 * Loads every plugin folder of the given roots: `<root>/<plugin>/index`, or the `main` of the
 * folder's package.json for a plugin built as its own package. Any malformed plugin or duplicate
 * `type@version` throws, naming the file, so a bad deployment fails at boot rather than on its
 * first run. `node_modules` and folders whose name starts with `.` or `_` are not plugins.
 * Code under a root gets the service's own SDK and class-validator when it requires them by name
 * (see plugin-modules.ts), so an outside package needs no environment to load.
 */
export function loadNodeRegistry(roots: readonly string[]): NodeRegistry {
  const nodes: RegisteredNode[] = [];
  for (const root of roots) {
    const folder = resolve(root);
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      throw new PluginLoadError(folder, 'plugin folder does not exist');
    }
    shareServiceModules(folder);
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name.startsWith('_')) continue;
      const dir = join(folder, entry.name);
      if (entry.isSymbolicLink()) {
        // A plugin linked in from elsewhere (ln -s, npm link): Node loads it from where it really
        // is, so that folder shares the service's modules too. A link to a file is no plugin.
        if (!existsSync(dir)) throw new PluginLoadError(dir, 'symbolic link to nothing');
        if (!statSync(dir).isDirectory()) continue;
        shareServiceModules(dir);
      } else if (!entry.isDirectory()) {
        continue;
      }
      nodes.push(loadPlugin(dir));
    }
  }
  // The registry refuses a second `type@version`, naming both files.
  return new NodeRegistry(nodes);
}

function loadPlugin(dir: string): RegisteredNode {
  const file = entryFile(dir);
  let exported: unknown;
  try {
    const mod = require(file) as { default?: unknown };
    exported = mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
  } catch (error) {
    throw new PluginLoadError(file, `failed to load: ${error instanceof Error ? error.message : String(error)}`);
  }
  return registerDefinition(exported, file);
}

function entryFile(dir: string): string {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return indexFile(dir);
  let main: unknown;
  try {
    main = (JSON.parse(readFileSync(manifest, 'utf8')) as { main?: unknown }).main;
  } catch (error) {
    throw new PluginLoadError(manifest, `unreadable package.json: ${(error as Error).message}`);
  }
  if (main === undefined) return indexFile(dir);
  if (typeof main !== 'string' || !main) throw new PluginLoadError(manifest, '"main" must name the compiled entry, e.g. "dist/index.js"');
  const file = resolve(dir, main);
  for (const candidate of [file, `${file}.js`, join(file, 'index.js')]) {
    if (!existsSync(candidate) || !statSync(candidate).isFile()) continue;
    // Outside its folder the entry would not get the service's SDK and class-validator (and is no part of this plugin).
    const inside = relative(realpathSync(dir), realpathSync(candidate));
    if (inside.startsWith(`..${sep}`) || resolve(inside) === inside)
      throw new PluginLoadError(manifest, `"main" names ${main}, outside the plugin's folder`);
    return candidate;
  }
  throw new PluginLoadError(manifest, `"main" names ${main}, which does not exist: build the plugin (npm run build in ${dir})`);
}

function indexFile(dir: string): string {
  const candidates = RUNNING_FROM_SOURCES ? ['index.ts', 'index.js'] : ['index.js'];
  for (const name of candidates) {
    const file = join(dir, name);
    if (existsSync(file)) return file;
  }
  const hint = !RUNNING_FROM_SOURCES && existsSync(join(dir, 'index.ts')) ? ' (index.ts found: compile it to index.js)' : '';
  throw new PluginLoadError(dir, `no ${candidates.join(' or ')}${hint}`);
}

/** Checks a default export against the node contract and derives its parameter schema. */
export function registerDefinition(value: unknown, source: string): RegisteredNode {
  const problems = definitionProblems(value);
  if (problems.length) throw new PluginLoadError(source, `invalid node definition: ${problems.join('; ')}`);
  const definition = value as NodeDefinition;
  let derived: ReturnType<typeof parametersSchema>;
  try {
    derived = parametersSchema(definition.parameters);
  } catch (error) {
    throw new PluginLoadError(source, `parameter class cannot be described: ${(error as Error).message}`);
  }
  const parameterNames = new Set(Object.keys(derived.types));
  const notText = [...derived.templates].filter((name) => derived.types[name] !== 'string');
  if (notText.length) {
    throw new PluginLoadError(source, `template parameters must be strings (@IsString()): ${notText.join(', ')}`);
  }
  return {
    definition: Object.freeze({ ...definition }),
    source,
    schema: derived.schema,
    parameterTypes: derived.types,
    parameterNames,
    templateParameters: derived.templates,
    codeParameters: derived.codes,
    optionLoaders: derived.optionLoaders,
    credentialParameters: derived.credentials,
    collectionParameters: derived.collections,
  };
}

export function validOutputs(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((name) => typeof name === 'string' && OUTPUT_NAME.test(name)) &&
    new Set(value).size === value.length
  );
}

function isTriggerOptions(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const options = value as Record<string, unknown>;
  return Object.keys(options).every((key) => (key === 'schedule' || key === 'tool') && typeof options[key] === 'function');
}

function definitionProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return ['the default export must be an object (use defineNode())'];
  const d = value as Record<string, unknown>;
  const problems: string[] = [];
  const extra = Object.keys(d).filter((key) => !KNOWN_KEYS.has(key));
  if (extra.length) problems.push(`unknown keys ${extra.join(', ')}`);
  if (typeof d.type !== 'string' || !TYPE_PATTERN.test(d.type)) problems.push('type must be kebab-case, e.g. "http-request"');
  if (typeof d.version !== 'number' || !Number.isInteger(d.version) || d.version < 1) problems.push('version must be a positive integer');
  if (typeof d.displayName !== 'string' || !d.displayName.trim()) problems.push('displayName must be a non-empty string');
  if (typeof d.description !== 'string') problems.push('description must be a string');
  if (typeof d.parameters !== 'function') problems.push('parameters must be a class');
  if (d.defaultRunMode !== 'input' && d.defaultRunMode !== 'item') problems.push('defaultRunMode must be "input" or "item"');
  if (d.trigger !== undefined && typeof d.trigger !== 'boolean' && !isTriggerOptions(d.trigger)) {
    problems.push('trigger must be a boolean or an object with optional schedule() and tool() functions');
  }
  if (d.outputs !== undefined && typeof d.outputs !== 'function' && !validOutputs(d.outputs)) {
    problems.push('outputs must be a non-empty array of distinct names (letters, digits, _ or -) or a function of the parameters');
  }
  if (d.idempotent !== undefined && typeof d.idempotent !== 'boolean' && typeof d.idempotent !== 'function') {
    problems.push('idempotent must be a boolean or a function of the parameters');
  }
  if (d.loop !== undefined && typeof d.loop !== 'boolean') problems.push('loop must be a boolean');
  if (d.respond !== undefined && typeof d.respond !== 'boolean') problems.push('respond must be a boolean');
  if (d.loop === true && !(Array.isArray(d.outputs) && d.outputs.includes('loop') && d.outputs.includes('done'))) {
    problems.push('a loop node must declare the outputs "loop" and "done"');
  }
  if (typeof d.execute !== 'function') problems.push('execute must be a function');
  return problems;
}
