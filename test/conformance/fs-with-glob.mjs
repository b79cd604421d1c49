// node:fs with the globSync of Node 22 the conformance CLI uses: `**/<name>` under a directory.
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

export function globSync(pattern, options = {}) {
  const name = pattern.replace(/^\*\*\//, '');
  return fs
    .readdirSync(options.cwd ?? process.cwd(), { recursive: true })
    .map(String)
    .filter((file) => path.basename(file) === name);
}
