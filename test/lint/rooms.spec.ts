import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const src = join(__dirname, '..', '..', 'src');

/** A room: a folder of src/, or a file at its top (main.ts, app.module.ts). */
const roomOf = (file: string): string => relative(src, file).split(/[\\/]/)[0];

/** Every import of one room by another, type-only ones too: `room -> rooms it imports`. */
function roomImports(): Map<string, Set<string>> {
  const arrows = new Map<string, Set<string>>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const [, a, b, c] of text.matchAll(/\bfrom\s+'(\.[^']*)'|\bimport\(\s*'(\.[^']*)'\s*\)|\brequire\(\s*'(\.[^']*)'\s*\)/g)) {
          const target = normalize(join(dirname(path), a ?? b ?? c));
          if (relative(src, target).startsWith('..')) continue;
          const [from, to] = [roomOf(path), roomOf(target)];
          if (from === to) continue;
          if (!arrows.has(from)) arrows.set(from, new Set());
          arrows.get(from)!.add(to);
        }
      }
    }
  };
  visit(src);
  return arrows;
}

/** Rooms that reach each other through imports (Tarjan's strongly connected components of two or more). */
function circles(arrows: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const connect = (room: string) => {
    index.set(room, index.size);
    low.set(room, index.get(room)!);
    stack.push(room);
    for (const next of arrows.get(room) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(room, Math.min(low.get(room)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(room, Math.min(low.get(room)!, index.get(next)!));
    }
    if (low.get(room) === index.get(room)) {
      const component: string[] = [];
      let member: string;
      do component.push((member = stack.pop()!));
      while (member !== room);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const room of arrows.keys()) if (!index.has(room)) connect(room);
  return found;
}

/**
 * The rooms of src/ stand on floors (docs/architecture.md): no two import each other, directly or
 * around a circle, so each sits wholly above or beneath the other. Lint checks the floors file by
 * file; this checks the rooms as a whole.
 */
describe('the rooms of src/', () => {
  const arrows = roomImports();

  it('reads the imports it judges', () => {
    expect(arrows.get('runs')).toEqual(expect.any(Set));
    expect([...arrows.get('runs')!]).toEqual(expect.arrayContaining(['domain', 'engine', 'jobs']));
    expect([...arrows.get('workflows')!]).toContain('runs');
  });

  it('has no two rooms that import each other, nor a circle of rooms', () => {
    const pairs = [...arrows].flatMap(([from, targets]) =>
      [...targets].filter((to) => from < to && arrows.get(to)?.has(from)).map((to) => `${from} <-> ${to}`),
    );
    expect(pairs).toEqual([]);
    expect(circles(arrows)).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const sample = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a', 'd'])],
      ['d', new Set<string>()],
    ]);
    expect(circles(sample)).toEqual([['a', 'b', 'c']]);
  });
});
