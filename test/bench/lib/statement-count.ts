import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The SQLite statements of a service process started with the count-statements.js preload, by
 * their SQL: start the app with `env` and `nodeOptions`, read its counts so far with `of(pid)`
 * (asked for by SIGUSR2, read back from a file of this counter's own), `remove()` when done.
 */
export function statementCounter() {
  const out = join(mkdtempSync(join(tmpdir(), 'wcs-statements-')), 'counts.json');
  return {
    env: { STATEMENTS_OUT: out },
    nodeOptions: ['-r', join(__dirname, 'count-statements.js')],
    async of(pid: number): Promise<Map<string, number>> {
      writeFileSync(out, '');
      process.kill(pid, 'SIGUSR2');
      for (;;) {
        const text = readFileSync(out, 'utf8');
        if (text) return new Map(JSON.parse(text) as [string, number][]);
        await sleep(20);
      }
    },
    remove: () => rmSync(dirname(out), { recursive: true, force: true }),
  };
}

/** What each statement was run between two counts, a run (of `runs`), the statements run at all. */
export function perRun(before: Map<string, number>, after: Map<string, number>, runs: number): Map<string, number> {
  const each = new Map<string, number>();
  for (const [sql, n] of after) if (n > (before.get(sql) ?? 0)) each.set(sql, (n - (before.get(sql) ?? 0)) / runs);
  return each;
}
