import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workerFile } from './common/worker-path';

/** Drivers of the optional backends: MongoDB (MONGODB_URI) and Redis (REDIS_URL). */
const OPTIONAL_DRIVERS = /[/\\]node_modules[/\\](mongoose|mongodb|bson|bull|ioredis|@nestjs[/\\]bull)[/\\]/;

/** The server side of the MCP SDK, and the MCP server built on it (src/mcp). */
const MCP_SERVER = /[/\\](node_modules[/\\]@modelcontextprotocol[/\\](server|server-legacy|node)|dist[/\\]src[/\\]mcp)[/\\]/;

/** Anything of the MCP SDK, its client included (with zod, about 6.5 MiB of heap): loaded by the first node that connects to a server. */
const MCP_SDK = /[/\\]node_modules[/\\]@modelcontextprotocol[/\\]/;

/**
 * Boots the compiled service in a child process, as `main.ts` does for the role, and lists the
 * files matching `pattern` it loaded.
 */
function loadedAtBoot(env: Record<string, string>, pattern: RegExp): string[] {
  const dataDir = mkdtempSync(join(tmpdir(), 'wcs-drivers-'));
  try {
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `require('reflect-metadata');
         const [factory, configs, pattern] = process.argv.slice(1);
         const { createHttpApp, createWorkerContext } = require(factory);
         const { loadConfig } = require(configs);
         (async () => {
           const config = loadConfig(JSON.parse(process.env.BOOT_ENV));
           const app = config.APP_ROLE === 'worker' ? await createWorkerContext(config) : await createHttpApp(config);
           const loaded = Object.keys(require.cache).filter((path) => new RegExp(pattern).test(path));
           await app.close();
           process.stdout.write(JSON.stringify(loaded));
         })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });`,
        workerFile(__dirname, 'app.factory'),
        workerFile(join(__dirname, 'config'), 'app-config'),
        pattern.source,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, BOOT_ENV: JSON.stringify({ DATA_DIR: dataDir, LOG_LEVEL: 'error', WORKERS: '1', ...env }) },
      },
    );
    return JSON.parse(out) as string[];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('AppModule: the embedded default', () => {
  it('boots a process serving the API without loading the MongoDB or Redis drivers', () => {
    expect(loadedAtBoot({ APP_ROLE: 'api' }, OPTIONAL_DRIVERS)).toEqual([]);
  }, 120_000);

  it('boots a worker process without loading the MongoDB or Redis drivers', () => {
    expect(loadedAtBoot({ APP_ROLE: 'worker' }, OPTIONAL_DRIVERS)).toEqual([]);
  }, 120_000);

  it('boots a worker process, which has no HTTP server, without the MCP server', () => {
    expect(loadedAtBoot({ APP_ROLE: 'worker' }, MCP_SERVER)).toEqual([]);
  }, 120_000);

  it('boots a worker process without loading anything of the MCP SDK, whose client only a node connecting to a server needs', () => {
    expect(loadedAtBoot({ APP_ROLE: 'worker' }, MCP_SDK)).toEqual([]);
  }, 120_000);

  it('still serves MCP from a process serving the API', () => {
    expect(loadedAtBoot({ APP_ROLE: 'api' }, MCP_SERVER)).toContainEqual(expect.stringMatching(/mcp\.module\.js$/));
  }, 120_000);
});
