// `npm start` and the CLI build once when dist/ is missing or older than the sources.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const marker = join(root, 'dist', 'src', 'main.js');
/** Outside plugins compile against these declarations (package.json "exports" ./sdk). */
const sdkTypes = join(root, 'dist', 'src', 'sdk', 'index.d.ts');

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path));
    else if (entry.name.endsWith('.ts')) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

const sourcesChanged = () =>
  Math.max(newest(join(root, 'src')), existsSync(join(root, 'plugins')) ? newest(join(root, 'plugins')) : 0) >
  statSync(marker).mtimeMs;

if (!existsSync(marker) || !existsSync(sdkTypes) || sourcesChanged()) {
  process.stderr.write('Building...\n');
  // The same two steps as `npm run build`: the service, then the SDK's declarations for outside plugins.
  for (const config of ['tsconfig.build.json', 'tsconfig.sdk.json']) {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, config)], { stdio: 'inherit', cwd: root });
  }
}
