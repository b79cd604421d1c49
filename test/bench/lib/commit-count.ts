import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The commits of a service process started with the count-commits.js preload (top-level
 * better-sqlite3 transactions): start the app with `env` and `nodeOptions`, read its count so far
 * with `of(pid)` (asked for by SIGUSR2, read back from a file of this counter's own), `remove()` when done.
 */
export function commitCounter() {
  const out = join(mkdtempSync(join(tmpdir(), 'wcs-commits-')), 'commits.txt');
  return {
    env: { COMMITS_OUT: out },
    nodeOptions: ['-r', join(__dirname, 'count-commits.js')],
    async of(pid: number): Promise<number> {
      writeFileSync(out, '');
      process.kill(pid, 'SIGUSR2');
      for (;;) {
        const text = readFileSync(out, 'utf8').trim();
        if (text) return Number(text.split(/\s+/)[1]);
        await sleep(20);
      }
    },
    remove: () => rmSync(dirname(out), { recursive: true, force: true }),
  };
}
