import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * The commits of a service started with the count-commits.js preload (top-level better-sqlite3
 * transactions), in all its processes (the worker processes of `npm start` inherit the preload),
 * and apart the BEGINs that found the write lock held by another of them: start the app with `env`
 * and `nodeOptions`, read the counts so far with `counts()` (each live process asked by SIGUSR2
 * and read back from its file in this counter's own directory; a process that exited counts as it
 * last wrote), `remove()` when done.
 */
export function commitCounter() {
  const dir = mkdtempSync(join(tmpdir(), 'wcs-commits-'));
  const counts = async (): Promise<{ commits: number; busy: number }> => {
    const pids = readdirSync(dir).map((file) => Number(file.replace('.txt', '')));
    const asked = pids.filter(alive);
    for (const pid of asked) writeFileSync(join(dir, `${pid}.txt`), '');
    for (const pid of asked) {
      try {
        process.kill(pid, 'SIGUSR2');
      } catch {
        // exited meanwhile: its exit wrote its last counts
      }
    }
    let commits = 0;
    let busy = 0;
    for (const pid of pids) {
      for (const deadline = Date.now() + 30_000; ; await sleep(20)) {
        const text = readFileSync(join(dir, `${pid}.txt`), 'utf8').trim();
        if (text) {
          const [, committed, held] = text.split(/\s+/).map(Number);
          commits += committed;
          busy += held;
          break;
        }
        if (Date.now() > deadline) throw new Error(`process ${pid} did not write its commit count`);
      }
    }
    return { commits, busy };
  };
  return {
    env: { COMMITS_OUT: dir },
    nodeOptions: ['-r', join(__dirname, 'count-commits.js')],
    counts,
    /** The commits so far, all processes together. */
    of: async (): Promise<number> => (await counts()).commits,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
