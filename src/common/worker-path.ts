import { existsSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const COMPILED = __dirname.split(sep).includes('dist');
const ROOT = COMPILED ? resolve(__dirname, '..', '..', '..') : resolve(__dirname, '..', '..');

/**
 * Worker threads need JavaScript. Compiled code finds its sibling `.js`; code running from
 * TypeScript sources (jest) finds the same module in `dist/`, which `npm test` builds first.
 */
export function workerFile(dirname: string, baseName: string): string {
  const beside = join(dirname, `${baseName}.js`);
  if (existsSync(beside)) return beside;
  const compiled = join(ROOT, 'dist', relative(ROOT, dirname), `${baseName}.js`);
  if (existsSync(compiled)) return compiled;
  throw new Error(`Worker ${baseName}.js not found beside ${dirname} nor at ${compiled}; run npm run build`);
}
