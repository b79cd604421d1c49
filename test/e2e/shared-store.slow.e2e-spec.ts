import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bootService, freePort, jsonCaller, Spawned, spawnCollecting, stopService, tempDir, waitForHttp } from '../utils/processes';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { testRedis, TestRedis } from '../utils/workflows-fixtures';

const root = join(__dirname, '..', '..');
const KEY = 'wcs_shared_store_key_0123456789abcdef';
const MAIN = join(root, 'dist', 'src', 'main.js');
const TRIES = 20;

/**
 * Processes started apart on one machine (an api and workers, or several workers) share one store
 * and one queue, or refuse to boot saying what differs; nothing races when they start together.
 */
describe('processes sharing a store', () => {
  const dirs: string[] = [];
  const started: Spawned[] = [];
  let redis: TestRedis | null = null;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    redis = await testRedis('shared-store');
    if (!redis && process.env.CI) throw new Error('Redis is not reachable on 127.0.0.1:6379');
  }, 240_000);

  afterAll(async () => {
    for (const spawned of started) await stopService(spawned);
    await redis?.cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const dir = (label: string): string => {
    const made = tempDir(label);
    dirs.push(made);
    return made;
  };

  /** The built service with `env`, not waited for: for processes expected to stop at boot. */
  const start = (env: Record<string, string>): Spawned => {
    const spawned = spawnCollecting(process.execPath, ['--no-node-snapshot', MAIN], {
      cwd: root,
      env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', BOOTSTRAP_API_KEY: KEY, REDIS_URL: '', EMBEDDING_THREADS: '1', ...env },
    });
    started.push(spawned);
    return spawned;
  };

  it(`three processes opening an empty store at once migrate it once (${TRIES} tries)`, async () => {
    const open = `require(${JSON.stringify(join(root, 'dist', 'src', 'storage', 'embedded', 'sqlite-database.js'))}).openSqliteDatabase(process.argv[1]).close()`;
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const store = dir('migrate');
      const racers = Array.from({ length: 3 }, () => spawnCollecting(process.execPath, ['-e', open, store], { cwd: root }));
      const exits = await Promise.all(racers.map((racer) => racer.exited(60_000)));
      const failed = exits.flatMap((exit, i) => (exit.code === 0 ? [] : [`exit ${exit.code}: ${racers[i].output()}`]));
      expect({ attempt, failed }).toEqual({ attempt, failed: [] });
    }
  }, 300_000);

  it('a worker whose queue is not the one its store was given refuses to boot, naming REDIS_URL', async () => {
    if (!redis) return;
    const store = dir('queue-mismatch');
    const port = await freePort();
    const api = await bootService(port, { DATA_DIR: store, BOOTSTRAP_API_KEY: KEY, APP_ROLE: 'api', REDIS_URL: '' });
    started.push(api);
    const worker = start({
      DATA_DIR: store,
      APP_ROLE: 'worker',
      WORKER_HEALTH_PORT: '0',
      REDIS_URL: redis.url,
      QUEUE_PREFIX: redis.prefix,
    });
    expect(await worker.exited(120_000)).toEqual({ code: 1, signal: null });
    expect(worker.output()).toMatch(
      /The queue of this process \(APP_ROLE=worker\) is Redis at .* but a running process on its store puts its runs on the embedded queue/,
    );
    expect(worker.output()).toContain('REDIS_URL');
    await stopService(api);
  }, 240_000);

  it('a worker on another store than the queue serves refuses to boot, naming DATA_DIR', async () => {
    if (!redis) return;
    const port = await freePort();
    const env = { REDIS_URL: redis.url, QUEUE_PREFIX: `${redis.prefix}-pair` };
    const api = await bootService(port, { DATA_DIR: dir('paired'), BOOTSTRAP_API_KEY: KEY, APP_ROLE: 'api', ...env });
    started.push(api);
    const worker = start({ DATA_DIR: dir('stray'), APP_ROLE: 'worker', WORKER_HEALTH_PORT: '0', ...env });
    expect(await worker.exited(120_000)).toEqual({ code: 1, signal: null });
    expect(worker.output()).toMatch(
      /carries the runs of store store_[0-9a-f-]+ for a running process, but the store of this process \(APP_ROLE=worker\) is store_[0-9a-f-]+: .*DATA_DIR/,
    );
    await stopService(api);
  }, 240_000);

  /** A worker started with `env`, once its health port answers ready. */
  const readyWorker = async (env: Record<string, string>): Promise<Spawned> => {
    const healthPort = await freePort();
    const worker = start({ ...env, APP_ROLE: 'worker', WORKER_HEALTH_PORT: String(healthPort) });
    await waitForHttp(`http://127.0.0.1:${healthPort}/health/ready`, worker, 120_000);
    return worker;
  };

  it('an api started after a worker, without the Redis queue the worker takes the runs of its store from, refuses to boot naming both', async () => {
    if (!redis) return;
    const store = dir('worker-first');
    const worker = await readyWorker({ DATA_DIR: store, REDIS_URL: redis.url, QUEUE_PREFIX: `${redis.prefix}-first` });
    const api = start({ DATA_DIR: store, APP_ROLE: 'api', PORT: String(await freePort()) });
    expect(await api.exited(120_000)).toEqual({ code: 1, signal: null });
    expect(api.output()).toMatch(
      /The queue of this process \(APP_ROLE=api\) is the embedded queue.* but a running process on its store puts its runs on Redis at .*REDIS_URL/,
    );
    await stopService(worker);
  }, 240_000);

  it('a second api on another store sharing one Redis prefix refuses to boot, naming DATA_DIR', async () => {
    if (!redis) return;
    const env = { APP_ROLE: 'api', REDIS_URL: redis.url, QUEUE_PREFIX: `${redis.prefix}-apis` };
    const first = await bootService(await freePort(), { ...env, DATA_DIR: dir('api-one'), BOOTSTRAP_API_KEY: KEY });
    started.push(first);
    const second = start({ ...env, DATA_DIR: dir('api-two'), PORT: String(await freePort()) });
    expect(await second.exited(120_000)).toEqual({ code: 1, signal: null });
    expect(second.output()).toMatch(
      /carries the runs of store store_[0-9a-f-]+ for a running process, but the store of this process \(APP_ROLE=api\)/,
    );
    await stopService(first);
  }, 240_000);

  it('two workers on one health port: the second stops naming WORKER_HEALTH_PORT', async () => {
    const store = dir('health-port');
    const healthPort = await freePort();
    const first = start({ DATA_DIR: store, APP_ROLE: 'worker', WORKER_HEALTH_PORT: String(healthPort) });
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
      const ready = await fetch(`http://127.0.0.1:${healthPort}/health/ready`).catch(() => null);
      if (ready?.status === 200) break;
      if (Date.now() > deadline || first.child.exitCode !== null) throw new Error(`first worker not ready:\n${first.output()}`);
    }
    const second = start({ DATA_DIR: store, APP_ROLE: 'worker', WORKER_HEALTH_PORT: String(healthPort) });
    expect(await second.exited(120_000)).toEqual({ code: 1, signal: null });
    expect(second.output()).toContain(`WORKER_HEALTH_PORT ${healthPort} is taken`);
    await stopService(first);
  }, 240_000);

  it('a search in the api process finds what a worker process indexed after the api had loaded the collection, and not what it deleted', async () => {
    const embeddings = await FakeEmbeddingsServer.start();
    try {
      const store = dir('search');
      const port = await freePort();
      const env = { DATA_DIR: store, BOOTSTRAP_API_KEY: KEY, REDIS_URL: '', EMBEDDINGS_URL: embeddings.url, WORKERS: '1' };
      const api = await bootService(port, { ...env, APP_ROLE: 'api' });
      started.push(api);
      started.push(start({ ...env, APP_ROLE: 'worker', WORKER_HEALTH_PORT: '0' }));
      const base = `http://127.0.0.1:${port}/api/v1`;
      const call = jsonCaller(base, KEY);
      const collection = (await call('POST', '/collections', { name: 'Shared' })).body.id as string;
      /** Adds a text file (ingested by the worker: the api process takes no jobs) and waits until it is indexed. */
      const add = async (name: string, text: string): Promise<string> => {
        const added = await call('POST', `/collections/${collection}/files`, {
          name,
          url: `data:text/plain;base64,${Buffer.from(text).toString('base64')}`,
        });
        expect(added.status).toBe(201);
        for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
          const file = await call('GET', `/collections/${collection}/files/${added.body.id}`);
          if (file.body.status === 'indexed') return added.body.id as string;
          if (file.body.status === 'failed' || Date.now() > deadline) throw new Error(`${name}: ${JSON.stringify(file.body)}`);
        }
      };
      const found = async (text: string) =>
        (await call('POST', `/collections/${collection}/search`, { text, mode: 'vector', top_k: 10 })).body.result.map(
          (hit: { fileId: string }) => hit.fileId,
        );
      const first = await add('first.txt', 'The lighthouse keeper counts ships at dawn.');
      // The api process loads the collection into its search thread here.
      expect(await found('The lighthouse keeper counts ships at dawn.')).toEqual([first]);
      const second = await add('second.txt', 'Copper kettles whistle in the harbour kitchen.');
      expect(await found('Copper kettles whistle in the harbour kitchen.')).toContain(second);
      expect((await call('DELETE', `/collections/${collection}/files/${first}`)).status).toBe(204);
      expect(await found('The lighthouse keeper counts ships at dawn.')).not.toContain(first);
    } finally {
      await embeddings.close();
    }
  }, 300_000);

  it('an unreachable MongoDB stops the boot naming MongoDB and its host', async () => {
    const service = start({
      DATA_DIR: dir('mongo'),
      MONGODB_URI: 'mongodb://user:secret@127.0.0.1:9/service',
      PORT: String(await freePort()),
    });
    expect(await service.exited(120_000)).toEqual({ code: 1, signal: null });
    expect(service.output()).toContain('MongoDB at 127.0.0.1:9 (MONGODB_URI) did not answer');
    expect(service.output()).not.toContain('TypeError');
    expect(service.output()).not.toContain('secret');
  }, 180_000);
});
