// Summarises a --cpu-prof profile (BENCH_CPU_PROF of runs-cpu.bench.ts): self time by function and by
// file or package, and inclusive time of the service's own functions, each as a share of the busy
// samples (all but `(idle)`: a process that waits for its next request is not what a run costs).
//   node test/bench/lib/cpuprofile-summary.js <file.cpuprofile> [top=15] [tree=0]
// With a third argument (a share in percent, e.g. 1.5) it also prints the call tree as text, a
// flame graph on its side: each frame with its inclusive share, children under it, most first, frames
// under that share left out, and a chain of frames that each hand nearly all their time to one
// callee printed on one line (`a > b > c`, the last with its place).
const { readFileSync } = require('node:fs');

const [file, topArg, treeArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/bench/lib/cpuprofile-summary.js <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 15);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const selfTime = new Map();
profile.samples.forEach((id, i) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
let total = 0;
for (const [id, us] of selfTime) if (byId.get(id).callFrame.functionName !== '(idle)') total += us;

const where = (url) =>
  (url ?? '')
    .replace(/^file:\/\//, '')
    .replace(/.*\/node_modules\//, 'nm:')
    .replace(/.*\/dist\//, 'dist:');
const name = (node) => `${node.callFrame.functionName || '(anonymous)'} ${where(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
const fileOf = (node) => {
  const url = where(node.callFrame.url);
  if (!url) return node.callFrame.functionName.startsWith('(') ? node.callFrame.functionName : '(native)';
  if (!url.startsWith('nm:')) return url;
  const parts = url.slice(3).split('/');
  return `nm:${parts.slice(0, parts[0].startsWith('@') ? 2 : 1).join('/')}`;
};

const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
const selfByFunction = new Map();
const selfByFile = new Map();
const inclusive = new Map();
for (const [id, us] of selfTime) {
  const node = byId.get(id);
  add(selfByFunction, name(node), us);
  add(selfByFile, fileOf(node), us);
  // Each function once per sample, however often it recurs on the stack.
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const key = name(byId.get(at));
    if (!seen.has(key)) add(inclusive, key, us);
    seen.add(key);
  }
}

const print = (title, map, keep = () => true) => {
  console.log(`\n## ${title} (of ${(total / 1000).toFixed(0)} ms busy)`);
  [...map]
    .filter(([key]) => keep(key) && !key.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .forEach(([key, us]) =>
      console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`),
    );
};
print('self time by function', selfByFunction);
print('self time by file or package', selfByFile);
print("inclusive time of the service's functions", inclusive, (key) => key.includes(' dist:'));

if (treeArg) {
  const minShare = Number(treeArg) / 100;
  const subtree = new Map();
  const sum = (id) => {
    const node = byId.get(id);
    let us = node.callFrame.functionName === '(idle)' ? 0 : (selfTime.get(id) ?? 0);
    for (const child of node.children ?? []) us += sum(child);
    subtree.set(id, us);
    return us;
  };
  const root = profile.nodes[0].id;
  sum(root);
  const shown = (id) => subtree.get(id) >= minShare * total;
  const childrenOf = (id) => (byId.get(id).children ?? []).filter(shown).sort((a, b) => subtree.get(b) - subtree.get(a));
  console.log(`\n## call tree, frames of at least ${treeArg}% (of ${(total / 1000).toFixed(0)} ms busy)`);
  const walk = (id, depth) => {
    const chain = [id];
    // A frame whose one shown callee takes nearly all its time joins it on the same line.
    for (
      let kids = childrenOf(id);
      kids.length === 1 && subtree.get(kids[0]) >= 0.97 * subtree.get(chain.at(-1));
      kids = childrenOf(kids[0])
    )
      chain.push(kids[0]);
    const share = ((100 * subtree.get(id)) / total).toFixed(1).padStart(5);
    const short = (at) => byId.get(at).callFrame.functionName || '(anonymous)';
    const line = [...chain.slice(0, -1).map(short), name(byId.get(chain.at(-1)))].join(' > ');
    console.log(`${share}%  ${'  '.repeat(depth)}${line}`);
    for (const child of childrenOf(chain.at(-1))) walk(child, depth + 1);
  };
  for (const child of childrenOf(root)) walk(child, 0);
}
