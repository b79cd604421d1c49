// Summarises a --cpu-prof profile (BENCH_CPU_PROF of runs-cpu.bench.ts): self time by function and by
// file or package, and inclusive time of the service's own functions, each as a share of the busy
// samples (all but `(idle)`: a process that waits for its next request is not what a run costs).
//   node test/bench/lib/cpuprofile-summary.js <file.cpuprofile> [top=15]
const { readFileSync } = require('node:fs');

const [file, topArg] = process.argv.slice(2);
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
