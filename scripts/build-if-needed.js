// `npm start` and the CLI build once when dist/ is missing or older than the sources: the server
// (tsc, with the SDK's declarations) and the web console (esbuild) each when its own sources changed.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
/** What the builds print goes to stderr: stdout is the CLI's JSON (`npm run -s cli ... | jq`). */
const OUTPUT_TO_STDERR = ['inherit', 2, 2];

function newest(dir, extensions) {
  if (!existsSync(dir)) return 0;
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path, extensions));
    else if (extensions.some((ext) => entry.name.endsWith(ext))) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

const stale = (marker, sources) => !existsSync(marker) || Math.max(...sources) > statSync(marker).mtimeMs;

const serverMarker = join(root, 'dist', 'src', 'main.js');
/** Outside plugins compile against these declarations (package.json "exports" ./sdk). */
const sdkTypes = join(root, 'dist', 'src', 'sdk', 'index.d.ts');
if (!existsSync(sdkTypes) || stale(serverMarker, [newest(join(root, 'src'), ['.ts']), newest(join(root, 'plugins'), ['.ts'])])) {
  process.stderr.write('Building the server...\n');
  // The same two steps as `npm run build`: the service, then the SDK's declarations for outside plugins.
  for (const config of ['tsconfig.build.json', 'tsconfig.sdk.json']) {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, config)], { stdio: OUTPUT_TO_STDERR, cwd: root });
  }
}

const consoleMarker = join(root, 'dist', 'console', 'index.html');
const consoleSources = [newest(join(root, 'console'), ['.ts', '.tsx', '.css', '.html', '.json']), statSync(join(root, 'scripts', 'build-console.js')).mtimeMs];
if (stale(consoleMarker, consoleSources)) {
  process.stderr.write('Building the web console...\n');
  execFileSync(process.execPath, [join(root, 'scripts', 'build-console.js')], { stdio: OUTPUT_TO_STDERR, cwd: root });
}
