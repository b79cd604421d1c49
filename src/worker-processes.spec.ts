import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { MALLOC_ARENAS, WorkerProcesses } from './worker-processes';

/** A stand-in for a worker process: writes the MALLOC_ARENA_MAX it was started with, then reports ready. */
const FAKE_WORKER = `
require('node:fs').writeFileSync(process.env.ARENAS_OUT, String(process.env.MALLOC_ARENA_MAX));
process.on('SIGTERM', () => process.exit(0));
process.send('ready');
setInterval(() => undefined, 1000);
`;

/** The MALLOC_ARENA_MAX one worker process forked with `env` saw. */
async function arenasOfWorker(env: NodeJS.ProcessEnv): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'worker-arenas-'));
  const entry = join(dir, 'worker.js');
  const out = join(dir, 'arenas');
  writeFileSync(entry, FAKE_WORKER);
  const workers = new WorkerProcesses(1, { ...env, ARENAS_OUT: out }, pino({ level: 'silent' }), entry);
  try {
    workers.start();
    for (let polls = 0; workers.status().ready < 1 && polls < 600; polls++) await new Promise((resolve) => setTimeout(resolve, 50));
    return readFileSync(out, 'utf8');
  } finally {
    await workers.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('WorkerProcesses: memory', () => {
  it("forks each worker process with glibc's malloc arenas bounded", async () => {
    const { MALLOC_ARENA_MAX: _, ...env } = process.env;
    expect(await arenasOfWorker(env)).toBe(MALLOC_ARENAS);
  }, 60_000);

  it('keeps a MALLOC_ARENA_MAX the environment sets', async () => {
    expect(await arenasOfWorker({ ...process.env, MALLOC_ARENA_MAX: '4' })).toBe('4');
  }, 60_000);
});
