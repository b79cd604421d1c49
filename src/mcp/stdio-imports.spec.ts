import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(__dirname, '..', '..');

/** Runtime imports (type-only ones vanish at compile time) of a module and everything it imports of ours. */
function runtimeImports(entry: string): { ours: Set<string>; packages: Set<string> } {
  const ours = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (ours.has(file)) return;
    ours.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/^import\s+(type\s+)?[^'";]*?from\s+'([^']+)'|^import\s+'([^']+)'/gm)) {
      if (match[1]) continue;
      const specifier = match[2] ?? match[3];
      if (!specifier.startsWith('.')) {
        packages.add(specifier);
        continue;
      }
      const base = resolve(dirname(file), specifier);
      const target = [`${base}.ts`, join(base, 'index.ts')].find(existsSync);
      if (!target) throw new Error(`cannot resolve ${specifier} from ${file}`);
      visit(target);
    }
  };
  visit(entry);
  return { ours, packages };
}

describe('the stdio program', () => {
  it('imports neither Nest nor the app: the MCP layer, the error type, its config, the shared input DTOs and their libraries', () => {
    const { ours, packages } = runtimeImports(join(__dirname, 'stdio.ts'));
    const outsideMcp = [...ours].map((file) => relative(root, file)).filter((file) => !file.startsWith('src/mcp/'));
    // The tools validate their arguments with the REST API's own DTOs, which therefore stay free of Nest.
    expect(outsideMcp.sort()).toEqual([
      'src/collections/collections.dto.ts',
      'src/collections/files.dto.ts',
      'src/collections/search.dto.ts',
      'src/common/app-error.ts',
      'src/common/class-schema.ts',
      'src/common/ids.ts',
      'src/common/input-validation.ts',
      'src/common/lru-cache.ts',
      'src/common/pagination.ts',
      'src/config/stdio-config.ts',
      'src/domain/file.model.ts',
      // The rerank option's shapes and bound (constants only).
      'src/domain/reranker.port.ts',
      // The one JSON Schema check (linear-time patterns), which loads ajv and re2js on first use.
      'src/sdk/json-schema.ts',
      'src/sdk/linear-regexp.ts',
    ]);
    expect([...ours].map((file) => relative(root, file))).not.toContain('src/mcp/in-process/services-backend.adapter.ts');
    expect([...packages]).toEqual(expect.arrayContaining(['@modelcontextprotocol/server/stdio', 'zod', 'class-validator']));
    for (const name of packages)
      expect(name).toMatch(
        /^(@modelcontextprotocol\/server(\/|$)|zod(\/v4)?$|class-validator$|class-transformer$|reflect-metadata$|node:)/,
      );
  });
});
