import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { configurationReference, generatedDocs, nodeReference, staleDocs } from '../../scripts/docs-generate';
import { BUILT_IN_PLUGINS, loadNodeRegistry } from '../../src/engine/plugin-loader';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as dashes. */
const anchors = (page: string) =>
  new Set(
    [
      ...read(page)
        .replace(/```[\s\S]*?```/g, '')
        .matchAll(/^#+ (.+)$/gm),
    ].map(([, title]) =>
      title
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The user docs: README.md and docs/ (docs/testing.md says how they are checked). */
describe('docs', () => {
  it('hold the generated pages as the sources produce them now (npm run docs:generate)', () => {
    expect(staleDocs()).toEqual([]);
  });

  it('describe every configuration variable', () => {
    const undocumented = configurationReference()
      .split('\n')
      .filter((line) => /^\| `[A-Z_]+` \|.*\|\s*\|$/.test(line));
    expect(undocumented).toEqual([]);
  });

  it('list every node type the repository ships in the node reference', () => {
    const reference = nodeReference();
    const types = loadNodeRegistry([BUILT_IN_PLUGINS])
      .list()
      .map((node) => node.definition.type);
    expect(types).toEqual(expect.arrayContaining(['ai-agent', 'mcp-client', 'error-trigger']));
    expect(types.filter((type) => !reference.includes(`(\`${type}\`, version`))).toEqual([]);
    expect(Object.keys(generatedDocs()).every((path) => pages.includes(path))).toBe(true);
  });

  it('link only to files and headings that exist, and link every screenshot', () => {
    const broken: string[] = [];
    const linked = new Set<string>();
    for (const page of pages) {
      for (const [, target, heading] of read(page).matchAll(/\]\(([^)\s#]*)(?:#([^)\s]*))?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const path = target
          ? relative(root, join(root, dirname(page), target))
              .split(sep)
              .join('/')
          : page;
        linked.add(path);
        if (!existsSync(join(root, path))) broken.push(`${page} -> ${target}`);
        else if (heading && path.endsWith('.md') && !anchors(path).has(heading)) broken.push(`${page} -> ${target}#${heading}`);
      }
    }
    expect(broken).toEqual([]);
    const screenshots = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.png'));
    expect(screenshots.filter((name) => !linked.has(`docs/${name}`))).toEqual([]);
  });

  it('are reachable from the README, which stays a front door', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(260);
    expect(pages.filter((page) => page.startsWith('docs/') && !readme.includes(`](${page})`))).toEqual([]);
  });

  it('never send a reader to notes the repository does not have', () => {
    const files = [...pages, 'eslint.config.js', ...readdirSync(join(root, 'test', 'lint')).map((name) => `test/lint/${name}`)];
    expect(files.filter((file) => /shared\s+design\s+notes/i.test(read(file)))).toEqual([]);
  });

  it('and the repository has the LICENSE file package.json names', () => {
    expect(JSON.parse(read('package.json')).license).toBe('Apache-2.0');
    expect(read('LICENSE')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
  });
});
