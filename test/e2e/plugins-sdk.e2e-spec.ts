import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const repo = join(__dirname, '..', '..');

/**
 * Requires one plugin directly, as a script or a bench would, then loads the built-in plugins as
 * `entry` (the plugin loader, compiled or from sources) does; answers the SDK files the process
 * holds and how many node types it found.
 */
function loadPlugins(entry: string, plugin: string, nodeArgs: string[] = []): { sdk: string[]; nodes: number } {
  const script = `
    require(${JSON.stringify(plugin)});
    const { loadNodeRegistry, BUILT_IN_PLUGINS } = require(${JSON.stringify(entry)});
    const nodes = loadNodeRegistry([BUILT_IN_PLUGINS]).list().length;
    const sdk = Object.keys(require.cache).filter((file) => /[\\\\/]sdk[\\\\/][^\\\\/]+\\.(js|ts)$/.test(file)).sort();
    process.stdout.write(JSON.stringify({ sdk, nodes }));`;
  const result = spawnSync(process.execPath, ['--no-node-snapshot', ...nodeArgs, '-e', script], {
    cwd: repo,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`node exited with ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout) as { sdk: string[]; nodes: number };
}

/** Plugins import the SDK by the package's name (workflow-collection-service/sdk), as outside plugins do. */
describe('the built-in plugins and the SDK', () => {
  it('compiled: the name resolves to the one SDK the engine runs on (dist/src/sdk)', () => {
    const { sdk, nodes } = loadPlugins(
      join(repo, 'dist', 'src', 'engine', 'plugin-loader.js'),
      join(repo, 'dist', 'plugins', 'set', 'index.js'),
    );
    expect(nodes).toBeGreaterThanOrEqual(20);
    expect(sdk.length).toBeGreaterThan(0);
    for (const file of sdk) expect(file.startsWith(join(repo, 'dist', 'src', 'sdk'))).toBe(true);
  });

  it('from sources: the name resolves to src/sdk, never to a second, compiled copy', () => {
    const { sdk, nodes } = loadPlugins(join(repo, 'src', 'engine', 'plugin-loader.ts'), join(repo, 'plugins', 'set', 'index.ts'), [
      '-r',
      join(repo, 'scripts', 'swc-register.js'),
    ]);
    expect(nodes).toBeGreaterThanOrEqual(20);
    expect(sdk.length).toBeGreaterThan(0);
    for (const file of sdk) expect(file.startsWith(join(repo, 'src', 'sdk'))).toBe(true);
  });
});
