// Node 20 has no fs.globSync, which the conformance CLI imports (for a report it reads from disk):
// this gives its `import { globSync } from 'fs'` a small stand-in. Loaded with --import by run.ts.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/'))
    return { url: ${JSON.stringify(new URL('./fs-with-glob.mjs', import.meta.url).href)}, shortCircuit: true };
  return next(specifier, context);
}`),
);
