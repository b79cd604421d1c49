import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NearestThreads, SEARCH_THREAD_YOUNG_GENERATION_MB } from './nearest-threads';

const repo = join(__dirname, '..', '..', '..', '..');

/**
 * Run in a process of its own: before the fix, closing the thread while it computed cells aborted
 * the whole process (`terminate called after throwing an instance of 'Napi::Error'`), which would
 * take the test runner with it.
 */
const script = `
const { NearestThreads, SEARCH_THREADS } = require(${JSON.stringify(join(__dirname, 'nearest-threads'))});
const { EXACT_SCAN_BELOW } = require(${JSON.stringify(join(__dirname, 'collection-vectors'))});
(async () => {
  const d = 512;
  // Each thread holds a share of the rows: enough in each for cells.
  const rows = SEARCH_THREADS * (EXACT_SCAN_BELOW + 20000);
  for (let round = 0; round < 3; round++) {
    const thread = new NearestThreads();
    let state = round + 1;
    const vectors = Float32Array.from({ length: rows * d }, () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5);
    const seqs = Float64Array.from({ length: rows }, (_, r) => r);
    thread.post({ type: 'add', collectionId: 'c', dimension: d, seqs, fileIds: Array.from({ length: rows }, (_, r) => 'f' + (r % 50)), vectors });
    // Stats are answered between build steps: past sampling and training, the thread is placing
    // rows in cells, in a native scan most of the time (a step begins with a JavaScript copy,
    // hence the pause before closing).
    for (let step = 0; step < 8; step++) {
      const stats = await thread.stats();
      if (!stats.collections[0].building) throw new Error('expected the cells to be computing');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    await thread.close();
  }
  console.log('closed');
})().catch((error) => { console.error(error); process.exit(1); });
`;

describe('NearestThreads', () => {
  it('closes while the threads compute cells without aborting the process', () => {
    const child = spawnSync(process.execPath, ['--no-node-snapshot', '-r', join(repo, 'scripts', 'swc-register.js'), '-e', script], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(child.stderr).not.toContain('Napi::Error');
    expect({ status: child.status, signal: child.signal, stdout: child.stdout.trim() }).toEqual({
      status: 0,
      signal: null,
      stdout: 'closed',
    });
  });
});

describe('NearestThreads: memory', () => {
  it('starts each search thread with a small young generation', async () => {
    // A stand-in for the search thread, answering stats with the limits it was started with.
    const dir = mkdtempSync(join(tmpdir(), 'nearest-limits-'));
    const path = join(dir, 'limits.worker.js');
    writeFileSync(
      path,
      `const { parentPort, resourceLimits } = require('node:worker_threads');
       parentPort.on('message', (m) => m.type === 'close' ? process.exit(0) : parentPort.postMessage({
         type: 'stats', id: m.id, stats: { collections: [{ collectionId: JSON.stringify(resourceLimits), size: 0, cells: 0, building: false }] },
       }));`,
    );
    const threads = new NearestThreads(2, path);
    try {
      const { collections } = await threads.stats();
      expect(collections.map((c) => JSON.parse(c.collectionId).maxYoungGenerationSizeMb)).toEqual([SEARCH_THREAD_YOUNG_GENERATION_MB]);
      expect(SEARCH_THREAD_YOUNG_GENERATION_MB).toBeLessThanOrEqual(8);
    } finally {
      await threads.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
