import { execFileSync } from 'node:child_process';
import { workerFile } from './worker-path';
import { limitHeapGrowth } from './heap-growth';

/**
 * A process that keeps 300,000 small objects live and churns through objects that live long
 * enough to be promoted (a ring of 200,000), as an ingesting worker does with its batches; prints
 * the largest total heap it saw, in bytes. With `limit`, the compiled helper runs first.
 */
const CHURN = `
const [helper, limit] = process.argv.slice(1);
if (limit === 'limit' && !require(helper).limitHeapGrowth([], '')) process.exit(3);
const v8 = require('node:v8');
const keep = [];
for (let i = 0; i < 300000; i++) keep.push({ a: i, b: 'x' + i });
const ring = new Array(200000);
let peak = 0;
for (let i = 0; i < 4000000; i++) {
  ring[i % ring.length] = { i, s: 'y' + i };
  if (i % 50000 === 0) peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
}
process.stdout.write(String(peak));
`;

const peakHeap = (limit: boolean) =>
  Number(
    execFileSync(process.execPath, ['-e', CHURN, workerFile(__dirname, 'heap-growth'), limit ? 'limit' : 'default'], {
      encoding: 'utf8',
    }),
  );

describe('limitHeapGrowth', () => {
  it('keeps a process whose promoted objects die later at a far smaller heap than V8 lets it grow to', () => {
    const limited = peakHeap(true);
    const unlimited = peakHeap(false);
    // 77 against 117 MiB when written; the margin leaves room for V8's concurrent marking's timing.
    expect(limited).toBeLessThan(0.8 * unlimited);
  }, 120_000);

  it('leaves a factor the process was started with as it is', () => {
    expect(limitHeapGrowth(['--heap-growing-percent=200'], '')).toBe(false);
    expect(limitHeapGrowth([], '--max-old-space-size=4096 --heap_growing_percent=10')).toBe(false);
  });
});
