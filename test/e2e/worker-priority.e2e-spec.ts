import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { freePort, logLines, Spawned, spawnCollecting, stopService, tempDir, waitForHttp } from '../utils/processes';

const KEY = 'wcs_priority_bootstrap_key_0123456789abcdef';
/** The niceness the service itself is started at (`nice -n`): the worker processes' is counted from it. */
const SERVICE_NICE = 3;

/** The niceness of every thread of `pid` (a niceness is a thread's on Linux), from /proc. */
const threadNiceness = (pid: number): number[] =>
  readdirSync(`/proc/${pid}/task`).flatMap((thread) => {
    try {
      // Fields after the command's closing parenthesis (the command may hold spaces): niceness is the 17th.
      const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });

/**
 * `npm start` with WORKERS=2 starts its worker process WORKERS_NICE above its own niceness (the API
 * process keeps the core when both have work), every thread of it; WORKERS_NICE=0 leaves it at the
 * service's. The service runs under `nice -n 3`, so a worker set to an absolute niceness shows.
 */
describe.each([
  { workersNice: 5, expected: SERVICE_NICE + 5 },
  { workersNice: 0, expected: SERVICE_NICE },
])('npm start with WORKERS_NICE=$workersNice', ({ workersNice, expected }) => {
  let service: Spawned | undefined;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir('priority');
    const port = await freePort();
    service = spawnCollecting(
      'nice',
      ['-n', String(SERVICE_NICE), process.execPath, '--no-node-snapshot', join(__dirname, '..', '..', 'dist', 'src', 'main.js')],
      {
        detached: true,
        env: {
          ...process.env,
          HOST: '127.0.0.1',
          PORT: String(port),
          DATA_DIR: dataDir,
          BOOTSTRAP_API_KEY: KEY,
          WORKERS: '2',
          WORKERS_NICE: String(workersNice),
          REDIS_URL: '',
          LOG_LEVEL: 'info',
          EMBEDDING_THREADS: '1',
        },
      },
    );
    await waitForHttp(`http://127.0.0.1:${port}/health/ready`, service, 120_000);
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
      const ready = (await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.json())) as any;
      if (ready.details?.workers?.processes === 2) break;
      if (Date.now() > deadline) throw new Error(`readiness says ${JSON.stringify(ready.details?.workers)}:\n${service.output()}`);
    }
  }, 180_000);

  afterAll(async () => {
    await stopService(service);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`runs the worker process at niceness ${expected}, every thread, and the API process at ${SERVICE_NICE}`, async () => {
    const readyPids = () =>
      logLines(service!.output())
        .filter((line) => line.msg === 'worker process ready')
        .map((line) => line.pid as number);
    // Its "ready" line may still sit in the log's buffer (written at least every 250 ms).
    for (const deadline = Date.now() + 30_000; readyPids().length === 0 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 100));
    const workers = readyPids();
    expect(workers).toHaveLength(1);
    const [worker] = workers;
    expect(getPriority(worker)).toBe(expected);
    expect(new Set(threadNiceness(worker))).toEqual(new Set([expected]));
    expect(getPriority(service!.child.pid!)).toBe(SERVICE_NICE);
    expect(new Set(threadNiceness(service!.child.pid!))).toEqual(new Set([SERVICE_NICE]));
  });
});
