import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNodeRegistry } from '../../src/engine/plugin-loader';
import { startTestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

const repo = join(__dirname, '..', '..');

/**
 * Someone new writes a node: `npm run plugin:new -- word-count` in a copy of the repository
 * layout (so the real plugins/ is never touched), and what it generates loads, passes its own test
 * unchanged, and runs in a workflow when its folder, outside the service's plugins/, is listed in
 * PLUGIN_PATHS.
 */
describe('writing a node: plugin:new, its test, PLUGIN_PATHS and a run', () => {
  let copy: string;
  let plugins: string;

  const scaffold = (...args: string[]) => spawnSync(process.execPath, [join(copy, 'scripts', 'plugin-new.js'), ...args], { cwd: copy, encoding: 'utf8' });

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'wcs-plugin-new-'));
    plugins = join(copy, 'plugins');
    mkdirSync(join(copy, 'scripts'));
    copyFileSync(join(repo, 'scripts', 'plugin-new.js'), join(copy, 'scripts', 'plugin-new.js'));
    symlinkSync(join(repo, 'src'), join(copy, 'src'), 'dir');
    symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'), 'dir');
  });

  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('scaffolds plugins/<type> with the definition, the parameter class and a spec', () => {
    const result = scaffold('word-count');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Created plugins/word-count/');
    for (const file of ['index.ts', 'word-count.parameters.ts', 'word-count.spec.ts']) expect(existsSync(join(plugins, 'word-count', file))).toBe(true);
    const index = readFileSync(join(plugins, 'word-count', 'index.ts'), 'utf8');
    expect(index).toContain("from '../../src/sdk'");
    expect(index).toContain('parameters: WordCountParameters');
  });

  it('refuses a folder that exists, a built-in type and a type that is not kebab-case', () => {
    for (const [args, message] of [
      [['word-count'], 'already exists'],
      [['word-count', '--dir', join(copy, 'elsewhere')], 'a built-in node is already called word-count'],
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
      schema: { properties: { message: { type: 'string', minLength: 1, maxLength: 1000, default: 'Hello', title: 'Message', description: expect.stringContaining('Text put in each output') } } },
    });
  });

  it('passes its own generated test, unchanged', () => {
    const base = require(join(repo, 'jest.config.js'));
    const [pattern, [, swcOptions]] = Object.entries(base.transform)[0] as [string, [string, object]];
    const config = { rootDir: plugins, testEnvironment: 'node', testMatch: ['<rootDir>/**/*.spec.ts'], transform: { [pattern]: [require.resolve('@swc/jest'), swcOptions] } };
    const result = spawnSync(process.execPath, ['--no-node-snapshot', join(repo, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', JSON.stringify(config), '--ci', '--watchman=false'], {
      cwd: copy,
      encoding: 'utf8',
      env: { ...process.env, FORCE_COLOR: '0' },
    });
    expect(result.stderr).toMatch(/Tests:\s+3 passed, 3 total/);
    expect(result.status).toBe(0);
  });

  it('runs in a workflow, loaded from a PLUGIN_PATHS folder outside plugins/', async () => {
    const t = await startTestApp({ PLUGIN_PATHS: plugins });
    try {
      const types = await t.request('GET', '/api/v1/node-types');
      expect(types.body.items.map((n: { type: string }) => n.type)).toContain('word-count');
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
      expect(created.body.definition.nodes[1].version).toBe(1);
      const started = await t.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input: [{ name: 'Ada' }, { name: 'Grace' }] } });
      const run = await waitForRun(t.request, started.body.runId);
      expect(run.status).toBe('succeeded');
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

  it('scaffolds into a PLUGIN_PATHS folder with --dir', () => {
    const elsewhere = join(copy, 'operator-plugins');
    const result = scaffold('shout', '--dir', elsewhere);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`add ${elsewhere} to PLUGIN_PATHS`);
    expect(readFileSync(join(elsewhere, 'shout', 'index.ts'), 'utf8')).toContain("from '../../src/sdk'");
    expect(loadNodeRegistry([elsewhere]).get('shout')?.definition.displayName).toBe('Shout');
  });
});
