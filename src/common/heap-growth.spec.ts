import { execFileSync } from 'node:child_process';
import { workerFile } from './worker-path';
import { growthGivenAtStart } from './heap-growth';

/**
 * A process that keeps 300,000 small objects live and churns through objects that live long
 * enough to be promoted (a ring of 200,000), as an ingesting worker does with its batches; prints
 * the largest total heap it saw, in bytes. `limit`: the churn runs inside withLimitedHeapGrowth;
 * `released`: one short work is held and released first, then the churn runs outside.
 */
const CHURN = `
const [helper, mode] = process.argv.slice(1);
const { withLimitedHeapGrowth } = require(helper);
const v8 = require('node:v8');
const churn = async () => {
  const keep = [];
  for (let i = 0; i < 300000; i++) keep.push({ a: i, b: 'x' + i });
  const ring = new Array(200000);
  let peak = 0;
  for (let i = 0; i < 4000000; i++) {
    ring[i % ring.length] = { i, s: 'y' + i };
    if (i % 50000 === 0) peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
  }
  return peak;
};
(async () => {
  if (mode === 'released') await withLimitedHeapGrowth(async () => 0, false);
  const peak = mode === 'limit' ? await withLimitedHeapGrowth(churn, false) : await churn();
  process.stdout.write(String(peak));
})();
`;

const peakHeap = (mode: 'limit' | 'default' | 'released') =>
  Number(execFileSync(process.execPath, ['-e', CHURN, workerFile(__dirname, 'heap-growth'), mode], { encoding: 'utf8' }));

describe('withLimitedHeapGrowth', () => {
  it('keeps a process whose promoted objects die later at a far smaller heap than V8 lets it grow to, while the work runs', () => {
    const limited = peakHeap('limit');
    const unlimited = peakHeap('default');
    // 77 against 117 MiB when written; the margin leaves room for V8's concurrent marking's timing.
    expect(limited).toBeLessThan(0.8 * unlimited);
    // Released: V8's own factor again.
    expect(peakHeap('released')).toBeGreaterThan(0.9 * unlimited);
  }, 120_000);

  it('leaves a factor the process was started with as it is', () => {
    expect(growthGivenAtStart(['--heap-growing-percent=200'])).toBe(true);
    expect(growthGivenAtStart(['--max-old-space-size=4096', '--heap_growing_percent=10'])).toBe(true);
    expect(growthGivenAtStart(['--max-old-space-size=4096'])).toBe(false);
  });
});
