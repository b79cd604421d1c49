// Bundles the web console (console/) into dist/console: index.html, one JS and one CSS file named
// by content hash, so the server can let browsers cache them for good.
const { build } = require('esbuild');
const { mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { basename, join } = require('node:path');

const root = join(__dirname, '..');
const source = join(root, 'console');
const defaultOut = join(root, 'dist', 'console');

async function buildConsole({ outDir = defaultOut, minify = true } = {}) {
  const assetsDir = join(outDir, 'assets');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(assetsDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(source, 'main.tsx'), app_style: join(source, 'styles.css') },
    bundle: true,
    outdir: assetsDir,
    entryNames: '[name]-[hash]',
    // Parts loaded on demand (the expression preview's parser) are chunks beside the app.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(source, 'tsconfig.json'),
    minify,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
  const script = outputs.find((name) => name.startsWith('app-') && name.endsWith('.js'));
  const style = outputs.find((name) => name.startsWith('app_style-') && name.endsWith('.css'));
  if (!script || !style) throw new Error(`console build produced ${outputs.join(', ')}: expected app-*.js and app_style-*.css`);
  const page = readFileSync(join(source, 'index.html'), 'utf8')
    .replace('%SCRIPT%', `/console/assets/${script}`)
    .replace('%STYLE%', `/console/assets/${style}`);
  writeFileSync(join(outDir, 'index.html'), page);
  return { outDir, script, style };
}

module.exports = { buildConsole };

if (require.main === module) {
  buildConsole().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}
