import { ChildProcess, spawn, spawnSync, SpawnSyncReturns } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNodeRegistry } from '../../src/engine/plugin-loader';
import { BOOTSTRAP_KEY, startTestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

const repo = join(__dirname, '..', '..');

/**
 * "Writing a node" in README.md turns the scaffold into a word counter by replacing these two
 * files; the spec the scaffold wrote must keep passing. `sdk` is where the plugin imports the SDK
 * from: the package's export, inside the repository and outside.
 */
const readmeEdit = (sdk: string): Record<string, string> => ({
  'word-count.parameters.ts': `import { IsIn, IsInt, IsString, Max, Min } from 'class-validator';
import { Parameter } from '${sdk}';

export class WordCountParameters {
  @Parameter({
    displayName: 'Text',
    description: 'Text to count, e.g. the expression \`item.content\`.',
    schema: { examples: ['The quick brown fox'] },
  })
  @IsString()
  text: string;

  @Parameter({ description: 'What to count.' })
  @IsIn(['words', 'characters'])
  unit: 'words' | 'characters' = 'words';

  @Parameter({ description: 'Counts above this are reported as this.' })
  @IsInt() @Min(1) @Max(1_000_000)
  cap: number = 100_000;
}
`,
  'index.ts': `import { defineNode } from '${sdk}';
import { WordCountParameters } from './word-count.parameters';

export default defineNode({
  type: 'word-count',          // stable, kebab-case; workflows pin type and version
  version: 1,                  // a breaking change is a new version in a new folder
  displayName: 'Word Count',
  description: 'Counts the words or characters of a text; outputs {count}.',
  parameters: WordCountParameters,
  defaultRunMode: 'item',      // once per element of the input array; 'input': once for all of it
  execute(ctx) {
    const { text, unit, cap } = ctx.params;   // typed and validated, whatever their mode
    const count = unit === 'words' ? text.split(/\\s+/).filter(Boolean).length : text.length;
    return { count: Math.min(count, cap) };
  },
});
`,
});

const applyReadmeEdit = (folder: string, sdk: string) => {
  for (const [name, text] of Object.entries(readmeEdit(sdk))) writeFileSync(join(folder, name), text);
};

/** A plain environment: what a user's shell has, without the variables of the npm running this test. */
const plainEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? tmpdir(),
  ...extra,
});

/**
 * Someone new writes a node inside the repository: `npm run plugin:new -- word-count` in a copy of
 * the repository layout (so the real plugins/ is never touched); what it generates loads, passes
 * its own test as generated and after the README's edit, and runs in a workflow.
 */
describe('writing a node in plugins/: plugin:new, its test, a run', () => {
  let copy: string;
  let plugins: string;

  const scaffold = (...args: string[]) =>
    spawnSync(process.execPath, [join(copy, 'scripts', 'plugin-new.js'), ...args], { cwd: copy, encoding: 'utf8' });

  const jest = () => {
    // The repository's one transform and SDK mapping, which every tier's project shares.
    const base = require(join(repo, 'jest.config.js')).projects[0];
    const pattern = '^.+\\.ts$';
    const [, swcOptions] = base.transform[pattern] as [string, object];
    const config = {
      rootDir: plugins,
      testEnvironment: 'node',
      testMatch: ['<rootDir>/**/*.spec.ts'],
      transform: { [pattern]: [require.resolve('@swc/jest'), swcOptions] },
      // The repository's own mapping of the SDK's package name onto its sources.
      moduleNameMapper: Object.fromEntries(
        Object.entries(base.moduleNameMapper as Record<string, string>).map(([name, path]) => [name, path.replace('<rootDir>', copy)]),
      ),
    };
    return spawnSync(
      process.execPath,
      [
        '--no-node-snapshot',
        join(repo, 'node_modules', 'jest', 'bin', 'jest.js'),
        '--config',
        JSON.stringify(config),
        '--ci',
        '--watchman=false',
      ],
      {
        cwd: copy,
        encoding: 'utf8',
        env: { ...process.env, FORCE_COLOR: '0' },
      },
    );
  };

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'wcs-plugin-new-'));
    plugins = join(copy, 'plugins');
    mkdirSync(join(copy, 'scripts'));
    copyFileSync(join(repo, 'scripts', 'plugin-new.js'), join(copy, 'scripts', 'plugin-new.js'));
    copyFileSync(join(repo, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(repo, 'src'), join(copy, 'src'), 'dir');
    symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'), 'dir');
  });

  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('scaffolds plugins/<type> with the definition, the parameter class and a spec', () => {
    const result = scaffold('word-count');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Created plugins/word-count/');
    for (const file of ['index.ts', 'word-count.parameters.ts', 'word-count.spec.ts'])
      expect(existsSync(join(plugins, 'word-count', file))).toBe(true);
    const index = readFileSync(join(plugins, 'word-count', 'index.ts'), 'utf8');
    expect(index).toContain("from 'workflow-collection-service/sdk'");
    expect(index).toContain('parameters: WordCountParameters');
    expect(existsSync(join(plugins, 'word-count', 'package.json'))).toBe(false);
  });

  it('refuses a folder that exists, a built-in type and a type that is not kebab-case', () => {
    for (const [args, message] of [
      [['word-count'], 'already exists'],
      [['word-count', '--dir', join(copy, 'elsewhere')], 'a built-in node is already called word-count'],
      [['shout', '--dir', plugins], 'plugins/ holds the nodes built with the service: leave out --dir'],
      [['WordCount'], 'is not a node type: use kebab-case'],
      [[], 'usage: npm run plugin:new -- <type>'],
    ] as const) {
      const result = scaffold(...args);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(message);
    }
  });

  it('loads through the plugin loader, its parameter class giving the schema', () => {
    const registry = loadNodeRegistry([plugins]);
    expect(registry.get('word-count')).toMatchObject({
      definition: { type: 'word-count', version: 1, displayName: 'Word Count', defaultRunMode: 'item' },
      schema: {
        properties: {
          message: {
            type: 'string',
            minLength: 1,
            maxLength: 1000,
            default: 'Hello',
            title: 'Message',
            description: expect.stringContaining('Text put in each output'),
          },
        },
      },
    });
  });

  it('runs in a workflow, loaded from PLUGIN_PATHS', async () => {
    const t = await startTestApp({ PLUGIN_PATHS: plugins });
    try {
      const created = await t.request('POST', '/api/v1/workflows', {
        body: {
          name: 'greet',
          definition: {
            nodes: [
              { id: 'trigger', type: 'webhook-trigger', parameters: {} },
              { id: 'greet', type: 'word-count', parameters: { message: 'Hello ${item.name}' }, parameterMode: { message: 'expression' } },
            ],
            edges: [{ from: 'trigger', to: 'greet' }],
          },
        },
      });
      expect(created.status).toBe(201);
      const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, {
        body: { runType: 'test', input: [{ name: 'Ada' }, { name: 'Grace' }] },
      });
      const run = await waitForRun(t.request, started.body.runId);
      expect(run.steps[1]).toMatchObject({
        type: 'word-count',
        status: 'succeeded',
        output: [
          { message: 'Hello Ada', received: { name: 'Ada' } },
          { message: 'Hello Grace', received: { name: 'Grace' } },
        ],
      });
    } finally {
      await t.close();
    }
  });

  it('passes its own generated test, and again after the README turned it into a word counter', () => {
    const generated = jest();
    expect(generated.stderr).toMatch(/Tests:\s+4 passed, 4 total/);
    expect(generated.status).toBe(0);

    applyReadmeEdit(join(plugins, 'word-count'), 'workflow-collection-service/sdk');
    const edited = jest();
    expect(edited.stderr).toMatch(/Tests:\s+4 passed, 4 total/);
    expect(edited.status).toBe(0);

    // The spec is no rubber stamp: a required parameter with neither default nor example fails it.
    writeFileSync(
      join(plugins, 'word-count', 'word-count.parameters.ts'),
      readmeEdit('workflow-collection-service/sdk')['word-count.parameters.ts'].replace(
        "    schema: { examples: ['The quick brown fox'] },\n",
        '',
      ),
    );
    const broken = jest();
    expect(broken.stderr).toMatch(/Tests:\s+2 failed, 2 passed, 4 total/);
    expect(broken.status).toBe(1);
  });
});

/**
 * An outside plugin as a user writes one: `npm run plugin:new -- word-count --dir <folder>` emits
 * a package that builds with its own `npm run build` and tests with its own `npm test`, offline,
 * as generated and after the README's edit; the BUILT service (`dist/src/main.js`, as after
 * `npm run build`) then loads it from PLUGIN_PATHS, with nothing else in its environment, and
 * runs it in a workflow started through the webhook. What the service loads is the package as
 * deployed, package.json and dist/ without node_modules: the service gives it its SDK and
 * class-validator.
 */
describe('writing a node as an outside package: its own build and test, PLUGIN_PATHS, the built service', () => {
  let dir: string;
  let deployed: string;
  let dataDir: string;
  let plugin: string;
  let server: ChildProcess | undefined;

  /** npm with the registry out of reach: anything that wanted a download would fail. */
  const npm = (cwd: string, ...args: string[]): SpawnSyncReturns<string> =>
    spawnSync('npm', args, {
      cwd,
      encoding: 'utf8',
      timeout: 180_000,
      env: plainEnv({ npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/', npm_config_update_notifier: 'false' }),
    });

  const passes = (result: SpawnSyncReturns<string>) => {
    expect([result.status, result.stdout.match(/^# (pass|fail) \d+$/gm)]).toEqual([0, ['# pass 4', '# fail 0']]);
  };

  beforeAll(() => {
    // The plugin compiles against the service's built SDK, as a user's would after `npm run build`.
    const build = spawnSync(process.execPath, [join(repo, 'scripts', 'build-if-needed.js')], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (build.status !== 0) throw new Error(`building the service failed: ${build.stderr}`);
    dir = mkdtempSync(join(tmpdir(), 'wcs-outside-plugins-'));
    deployed = mkdtempSync(join(tmpdir(), 'wcs-outside-deployed-'));
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-outside-data-'));
    plugin = join(dir, 'word-count');
  }, 300_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(deployed, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('scaffolds a package: package.json, tsconfig.json, sources, a spec and links to the service', () => {
    const result = npm(repo, 'run', '--silent', 'plugin:new', '--', 'word-count', '--dir', dir);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`cd ${plugin} && npm test`);
    const manifest = JSON.parse(readFileSync(join(plugin, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: 'word-count',
      private: true,
      main: 'dist/index.js',
      scripts: { build: expect.any(String), test: expect.any(String) },
      devDependencies: { 'workflow-collection-service': expect.stringMatching(/^file:\.\.\//) },
    });
    for (const file of ['tsconfig.json', 'src/index.ts', 'src/word-count.parameters.ts', 'src/word-count.spec.ts'])
      expect([file, existsSync(join(plugin, file))]).toEqual([file, true]);
    expect(readFileSync(join(plugin, 'src', 'index.ts'), 'utf8')).toContain("from 'workflow-collection-service/sdk'");
    // Links, not copies: nothing was downloaded, and the service's SDK is the one built above.
    expect(lstatSync(join(plugin, 'node_modules', 'workflow-collection-service')).isSymbolicLink()).toBe(true);
    // Asked of Node itself: jest maps the name onto the repository's sources.
    const resolved = spawnSync(process.execPath, ['-p', "require.resolve('workflow-collection-service/sdk')"], {
      cwd: plugin,
      encoding: 'utf8',
    });
    expect(resolved.stdout.trim()).toBe(join(repo, 'dist', 'src', 'sdk', 'index.js'));
  });

  it('builds with its own command and passes its own spec, offline', () => {
    const built = npm(plugin, 'run', 'build');
    expect(built.status).toBe(0);
    expect(existsSync(join(plugin, 'dist', 'index.js'))).toBe(true);
    passes(npm(plugin, 'test'));
  }, 180_000);

  it("passes its spec again after the README's edit", () => {
    applyReadmeEdit(join(plugin, 'src'), 'workflow-collection-service/sdk');
    passes(npm(plugin, 'test'));
  }, 180_000);

  it('is loaded by the built service from PLUGIN_PATHS and runs in a workflow through the webhook', async () => {
    mkdirSync(join(deployed, 'word-count'));
    copyFileSync(join(plugin, 'package.json'), join(deployed, 'word-count', 'package.json'));
    cpSync(join(plugin, 'dist'), join(deployed, 'word-count', 'dist'), { recursive: true });
    // Not a plugin: the loader must not even look inside.
    mkdirSync(join(deployed, 'node_modules', 'some-library'), { recursive: true });
    writeFileSync(join(deployed, 'node_modules', 'some-library', 'index.js'), 'throw new Error("node_modules was scanned");');

    const child = spawn(process.execPath, ['--no-node-snapshot', join(repo, 'dist', 'src', 'main.js')], {
      cwd: repo,
      env: plainEnv({
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: '0',
        BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
        PLUGIN_PATHS: deployed,
        EMBEDDING_THREADS: '1',
        LOG_LEVEL: 'info',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = child;
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), 90_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const listening = /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"listening"/.exec(output);
        if (listening) {
          clearTimeout(timer);
          resolve(listening[1]);
        }
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the service exited with ${code}:\n${output}`));
      });
    });
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(url + path, {
        method,
        headers: { 'x-api-key': BOOTSTRAP_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };

    const types = await call('GET', '/api/v1/node-types');
    expect(types.body.items.find((n: { type: string }) => n.type === 'word-count')).toEqual({
      type: 'word-count',
      version: 1,
      displayName: 'Word Count',
      description: 'Counts the words or characters of a text; outputs {count}.',
      trigger: false,
      defaultRunMode: 'item',
      parameters: {
        type: 'object',
        properties: {
          text: {
            title: 'Text',
            description: 'Text to count, e.g. the expression `item.content`.',
            type: 'string',
            examples: ['The quick brown fox'],
          },
          unit: { description: 'What to count.', enum: ['words', 'characters'], type: 'string', default: 'words' },
          cap: {
            description: 'Counts above this are reported as this.',
            type: 'integer',
            minimum: 1,
            maximum: 1_000_000,
            default: 100_000,
          },
        },
        required: ['text'],
        additionalProperties: false,
      },
    });

    const definition = (unit: string) => ({
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'count', type: 'word-count', parameters: { text: 'item.text', unit }, parameterMode: { text: 'expression' } },
      ],
      edges: [{ from: 'trigger', to: 'count' }],
    });
    // The plugin's class-validator rules are the service's: a bad fixed value is refused on save.
    const refused = await call('POST', '/api/v1/workflows', { name: 'count', definition: definition('lines') });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.details)).toContain('unit');

    const created = await call('POST', '/api/v1/workflows', { name: 'count', definition: definition('words') });
    expect(created.status).toBe(201);
    const run = await call('POST', `/api/v1/workflows/${created.body.id}/runs?wait=30`, {
      runType: 'test',
      input: [{ text: 'one two three' }, { text: 'four' }],
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      status: 'succeeded',
      steps: [{ nodeId: 'trigger' }, { nodeId: 'count', type: 'word-count', status: 'succeeded', output: [{ count: 3 }, { count: 1 }] }],
    });
  }, 180_000);
});
