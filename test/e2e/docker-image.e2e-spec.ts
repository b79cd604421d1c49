import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, logLines, processExists, Spawned, spawnCollecting, tempDir, waitForHttp } from '../utils/processes';

const root = join(__dirname, '..', '..');
/** The `node` user of the official Node.js images, which the Dockerfile runs as. */
const NODE_UID = 1000;
const NODE_GID = 1000;
const KEY = 'wcs_image_bootstrap_key_0123456789';

/**
 * No Docker engine runs where these tests do, so the image is checked in two halves: what the
 * Dockerfile declares (its runtime user, and /data created for that user before VOLUME), and what
 * the image's entry does when it runs as that user on the layouts a fresh volume gives it.
 */
describe('Dockerfile: the runtime stage', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m);
  const runtime = stages[stages.length - 1]
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const index = (pattern: RegExp) => runtime.findIndex((line) => pattern.test(line));

  it('runs as node, with DATA_DIR on the /data volume', () => {
    expect(runtime).toContain('USER node');
    expect(runtime).toContain('VOLUME ["/data"]');
    expect(runtime.some((line) => /^ENV .*\bDATA_DIR=\/data\b/.test(line))).toBe(true);
    // Two malloc arenas, as npm start gives the process it starts (package.json).
    expect(runtime.some((line) => /^ENV .*\bMALLOC_ARENA_MAX=2\b/.test(line))).toBe(true);
    expect(runtime.at(-1)).toBe('CMD ["node", "--no-node-snapshot", "dist/src/main.js"]');
  });

  it('creates /data owned by node before declaring the volume, so a fresh named volume is writable', () => {
    const prepared = index(/^RUN .*mkdir -p \/data\b.*&& chown node:node \/data\b/);
    expect(prepared).toBeGreaterThanOrEqual(0);
    expect(prepared).toBeLessThan(index(/^VOLUME /));
    expect(index(/^USER node$/)).toBeGreaterThan(prepared);
  });

  it('builds from what the build needs, and .dockerignore keeps local state and secrets out', () => {
    const build = stages[1];
    for (const needed of [
      'COPY package.json package-lock.json .npmrc ./',
      'COPY src ./src',
      'COPY plugins ./plugins',
      'RUN npm run build',
    ]) {
      expect(build).toContain(needed);
    }
    expect(build).toMatch(/^COPY tsconfig\.json tsconfig\.build\.json/m);
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', '.env', '.env.*', '.git']) expect(ignored).toContain(entry);
  });
});

/** `COPY <sources...> <destination>` lines of a stage, without `--from=` ones (those copy from another stage). */
function copiedFromContext(stage: string): { sources: string[]; destination: string }[] {
  return stage
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('COPY ') && !/^COPY\s+--from=/.test(line))
    .map((line) => {
      const words = line.slice('COPY '.length).trim().split(/\s+/);
      return { sources: words.slice(0, -1), destination: words.at(-1)! };
    });
}

/** A .dockerignore entry (a name or glob at the context's top) as a test on a top-level name. */
const ignoredBy = (entries: string[]) => (name: string) =>
  entries.some((entry) =>
    new RegExp(
      `^${entry
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')}$`,
    ).test(name),
  );

describe('Dockerfile: the build stage', () => {
  /**
   * `docker build` without a Docker engine: the files the build stage's COPY lines take from the
   * context go into an empty folder, the dependencies `RUN npm ci` installs from the lockfile are
   * this checkout's (the same lockfile), and `npm run build` runs there. A file the build needs
   * that the Dockerfile does not copy (scripts/api-types.js, once) fails here as in the image.
   */
  it(
    'builds with exactly the files its COPY lines take from the context',
    () => {
      const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
      const build = dockerfile.split(/^FROM /m)[1];
      expect(build).toMatch(/^RUN npm ci$/m);
      expect(build).toMatch(/^RUN npm run build\b/m);
      const ignored = ignoredBy(
        readFileSync(join(root, '.dockerignore'), 'utf8')
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line && !line.startsWith('#')),
      );
      const context = tempDir('image-build');
      try {
        for (const { sources, destination } of copiedFromContext(build)) {
          for (const source of sources) {
            expect({ source, ignored: ignored(source.split('/')[0]) }).toEqual({ source, ignored: false });
            const target = destination.endsWith('/') ? join(context, destination, source.split('/').at(-1)!) : join(context, destination);
            mkdirSync(join(target, '..'), { recursive: true });
            cpSync(join(root, source), target, { recursive: true });
          }
        }
        symlinkSync(join(root, 'node_modules'), join(context, 'node_modules'));
        const built = spawnSync('npm', ['run', 'build'], { cwd: context, encoding: 'utf8', timeout: 15 * 60_000 });
        expect({ status: built.status, output: built.status === 0 ? '' : `${built.stdout}\n${built.stderr}` }).toEqual({
          status: 0,
          output: '',
        });
        for (const file of ['dist/src/main.js', 'dist/src/cli.js', 'dist/console/index.html'])
          expect(statSync(join(context, file)).isFile()).toBe(true);
      } finally {
        rmSync(context, { recursive: true, force: true });
      }
    },
    16 * 60_000,
  );
});

describe('docker-compose.yml', () => {
  const compose = readFileSync(join(root, 'docker-compose.yml'), 'utf8');

  it('requires BOOTSTRAP_API_KEY instead of defaulting it to a placeholder', () => {
    expect(compose).toMatch(/^\s+BOOTSTRAP_API_KEY: \$\{BOOTSTRAP_API_KEY:\?[^}]+\}$/m);
    expect(compose).not.toContain('change-me');
  });

  it('and a service started with the placeholder it once defaulted to refuses to boot, without echoing it', async () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    const dataDir = tempDir('placeholder');
    try {
      const spawned = spawnCollecting(process.execPath, ['--no-node-snapshot', join(root, 'dist', 'src', 'main.js')], {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          DATA_DIR: dataDir,
          PORT: String(await freePort()),
          HOST: '127.0.0.1',
          BOOTSTRAP_API_KEY: 'change-me-to-a-long-random-secret',
        },
      });
      expect(await spawned.exited(60_000)).toEqual({ code: 1, signal: null });
      expect(spawned.output()).toContain('BOOTSTRAP_API_KEY: is a placeholder, not a secret: set a long random secret');
      expect(spawned.output()).not.toContain('change-me');
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);

  it('lets the API scale: a host port range, not one fixed port, and PUBLIC_URL for approval links', () => {
    const api = compose.slice(compose.indexOf('\n  api:'), compose.indexOf('\n  worker:'));
    const ports = api
      .match(/ports:\n((?:\s+- .+\n)+)/)?.[1]
      .trim()
      .split('\n')
      .map((line) => line.trim());
    expect(ports).toEqual(['- "3000-3009:3000"']);
    expect(compose).toMatch(/^\s+PUBLIC_URL: \$\{PUBLIC_URL:-[^}]+\}$/m);
    expect(compose).toContain('<<: *app-env');
  });

  it("checks the worker's readiness on its health port", () => {
    const worker = compose.slice(compose.indexOf('\n  worker:'), compose.indexOf('\n  mongo:'));
    expect(worker).toContain('WORKER_HEALTH_PORT: 3001');
    expect(worker).toContain("fetch('http://127.0.0.1:3001/health/ready')");
    expect(worker).not.toContain('process.kill(1, 0)');
  });
});

const isRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;
const skipReason = !isRoot
  ? 'these tests switch to uid 1000 and need root; run them as root (or in CI) to check the non-root boot'
  : !hasSetpriv
    ? 'setpriv (util-linux) is not installed; it runs the entry as uid 1000'
    : undefined;
if (skipReason) console.warn(`docker-image e2e: SKIPPED the non-root boot: ${skipReason}`);
const describeAsNode = skipReason ? describe.skip : describe;

describeAsNode(`the image's entry as the node user (uid ${NODE_UID}) on a fresh volume layout`, () => {
  /** The image's /app: what its runtime stage copies, root's and readable by all. */
  let app: string;
  let layout: string;
  const started: Spawned[] = [];

  beforeAll(() => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    // A copy, not the checkout itself: uid 1000 may not be able to reach the checkout (a clone in
    // a `mktemp -d` folder is root's alone). Hard links where the filesystem allows, as they are quick.
    app = tempDir('image-app');
    chmodSync(app, 0o755);
    for (const copied of ['node_modules', 'dist', 'package.json']) {
      try {
        execFileSync('cp', ['-al', join(root, copied), app]);
      } catch {
        execFileSync('cp', ['-a', join(root, copied), app]);
      }
    }
  }, 240_000);

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  beforeEach(() => {
    // The image's filesystem: / and its folders are root's and readable by all.
    layout = tempDir('image');
    chmodSync(layout, 0o755);
  });

  afterEach(() => {
    for (const spawned of started.splice(0))
      if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGKILL');
    rmSync(layout, { recursive: true, force: true });
  });

  /** `node --no-node-snapshot dist/src/main.js` as the Dockerfile's CMD runs it, as uid 1000. */
  const entryAsNode = (dataDir: string, port: number): Spawned => {
    const spawned = spawnCollecting(
      'setpriv',
      [`--reuid=${NODE_UID}`, `--regid=${NODE_GID}`, '--clear-groups', process.execPath, '--no-node-snapshot', 'dist/src/main.js'],
      {
        cwd: app,
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'production',
          DATA_DIR: dataDir,
          PORT: String(port),
          HOST: '127.0.0.1',
          BOOTSTRAP_API_KEY: KEY,
          EMBEDDING_THREADS: '1',
          LOG_LEVEL: 'info',
        },
      },
    );
    started.push(spawned);
    return spawned;
  };

  const expectRefusal = async (spawned: Spawned, unwritable: string, dataDir: string) => {
    const exit = await spawned.exited(60_000);
    expect(exit).toEqual({ code: 1, signal: null });
    const output = spawned.output();
    expect(output).toContain(`DATA_DIR: ${unwritable} is not writable by user ${NODE_UID} (group ${NODE_GID}): EACCES.`);
    expect(output).toContain(`chown -R ${NODE_UID}:${NODE_GID} ${dataDir}`);
    // One message, not a stack trace.
    expect(output).not.toMatch(/^\s+at /m);
  };

  it('refuses a root-owned DATA_DIR (a volume created without the image preparing it) with a clear message', async () => {
    const dataDir = join(layout, 'data');
    mkdirSync(dataDir, { mode: 0o755 });

    await expectRefusal(entryAsNode(dataDir, await freePort()), dataDir, dataDir);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('refuses a DATA_DIR handed over without its files (chown without -R), naming the file', async () => {
    const dataDir = join(layout, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chownSync(dataDir, NODE_UID, NODE_GID);
    writeFileSync(join(dataDir, 'service.db'), '', { mode: 0o644 });

    await expectRefusal(entryAsNode(dataDir, await freePort()), join(dataDir, 'service.db'), dataDir);
  });

  it('boots on /data prepared as the Dockerfile prepares it, keeps its files there, and stops on SIGTERM', async () => {
    const dataDir = join(layout, 'data');
    // RUN mkdir -p /data && chown node:node /data
    mkdirSync(dataDir, { mode: 0o755 });
    chownSync(dataDir, NODE_UID, NODE_GID);
    const port = await freePort();

    const spawned = entryAsNode(dataDir, port);
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, spawned);
    const me = await fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { 'x-api-key': KEY } });
    expect(me.status).toBe(200);
    for (const file of ['service.db', 'secrets.key']) expect(statSync(join(dataDir, file)).uid).toBe(NODE_UID);
    expect(statSync(join(dataDir, 'secrets.key')).mode & 0o777).toBe(0o600);

    spawned.child.kill('SIGTERM');
    expect(await spawned.exited(45_000)).toEqual({ code: 0, signal: null });
    const pid = logLines(spawned.output()).find((l) => l.msg === 'listening')?.pid as number;
    expect(processExists(pid)).toBe(false);
  }, 120_000);
});
