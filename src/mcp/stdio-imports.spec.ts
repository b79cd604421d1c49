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
  it('imports neither Nest nor the app: only the MCP layer, the error type, its own config and its libraries', () => {
    const { ours, packages } = runtimeImports(join(__dirname, 'stdio.ts'));
    const outsideMcp = [...ours].map((file) => relative(root, file)).filter((file) => !file.startsWith('src/mcp/'));
    expect(outsideMcp.sort()).toEqual(['src/common/app-error.ts', 'src/config/stdio-config.ts']);
    expect([...ours].map((file) => relative(root, file))).not.toContain('src/mcp/services-backend.adapter.ts');
    expect([...packages]).toEqual(expect.arrayContaining(['@modelcontextprotocol/sdk/server/stdio.js', 'zod']));
    for (const name of packages) expect(name).toMatch(/^(@modelcontextprotocol\/sdk\/|zod$)/);
  });
});
