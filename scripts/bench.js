// `npm run bench`: runs every test/bench/*.bench.ts in turn (each prints its JSON figure lines).
const { spawnSync } = require('node:child_process');
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const only = process.argv.slice(2);
const benches = readdirSync(join(root, 'test', 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

let failed = 0;
for (const file of benches) {
  process.stdout.write(`\n=== ${file}\n`);
  const result = spawnSync(process.execPath, ['--no-node-snapshot', '--expose-gc', '-r', './scripts/swc-register.js', join('test', 'bench', file)], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  });
  if (result.status !== 0) {
    failed++;
    process.stdout.write(`${file} exited with ${result.status}\n`);
  }
}
process.exit(failed ? 1 : 0);
