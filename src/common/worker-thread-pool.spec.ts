import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerThreadPool } from './worker-thread-pool';

describe('WorkerThreadPool', () => {
  let dir: string;
  let pool: WorkerThreadPool | undefined;
  const worker = (name: string, source: string) => {
    const path = join(dir, name);
    writeFileSync(path, source);
    return path;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'worker-thread-pool-'));
  });
  afterEach(async () => {
    await pool?.destroy();
    pool = undefined;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails the tasks of threads that cannot start, with their error, instead of leaving them queued', async () => {
    pool = new WorkerThreadPool({ filename: worker('broken.js', "throw new Error('cannot load');"), threads: 2 });
    await expect(Promise.all([pool.run('a'), pool.run('b')])).rejects.toMatchObject({
      name: 'WorkerThreadStopped',
      message: 'cannot load',
    });
    // Later work starts a thread again, once, and fails the same way.
    await expect(pool.run('c')).rejects.toMatchObject({ name: 'WorkerThreadStopped', message: 'cannot load' });
  });

  it('names the exit code of a thread that exited during a task, and replaces the thread', async () => {
    const source = `module.exports = async (task) => (task === 'exit' ? process.exit(5) : require('node:worker_threads').threadId);`;
    pool = new WorkerThreadPool({ filename: worker('exits.js', source), threads: 1 });
    const first = await pool.run<number>('who');
    await expect(pool.run('exit')).rejects.toMatchObject({ name: 'WorkerThreadStopped', exitCode: 5, message: 'exit code 5' });
    const replacement = await pool.run<number>('who');
    expect(replacement).not.toBe(first);
  });

  it('starts every thread and resolves once each has loaded', async () => {
    const log = join(dir, 'loaded.log');
    // The first thread to load is quick, the other slow.
    const source = `
      const { appendFileSync, openSync } = require('node:fs');
      const { threadId } = require('node:worker_threads');
      let first = true;
      try { openSync(${JSON.stringify(`${log}.first`)}, 'wx'); } catch { first = false; }
      module.exports = new Promise((resolve) => setTimeout(resolve, first ? 0 : 300)).then(() => {
        appendFileSync(${JSON.stringify(log)}, threadId + '\\n');
        return async () => null;
      });`;
    pool = new WorkerThreadPool({ filename: worker('slow-start.js', source), threads: 2 });
    await pool.startThreads('noop');
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
    await expect(pool.startThreads('noop')).resolves.toBeUndefined();
  });

  it('rejects a start still waiting, queued tasks and new ones once destroyed', async () => {
    pool = new WorkerThreadPool({ filename: worker('never-ready.js', 'module.exports = new Promise(() => {});'), threads: 1 });
    const starting = expect(pool.startThreads('noop')).rejects.toMatchObject({ message: 'The worker pool is closed' });
    const queued = expect(pool.run('a')).rejects.toMatchObject({ message: 'The worker pool is closed' });
    await pool.destroy();
    await starting;
    await queued;
    await expect(pool.run('b')).rejects.toMatchObject({ message: 'The worker pool is closed' });
  });

  it('refuses a pool without threads', () => {
    expect(() => new WorkerThreadPool({ filename: join(dir, 'any.js'), threads: 0 })).toThrow(RangeError);
  });
});
