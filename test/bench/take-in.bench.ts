/*
 * A search thread taking in rows (issue 28: the API process's search threads taking in what the
 * worker processes committed were the largest CPU cost a passage left). One shard's rows, as
 * ShareReader hands them (READ_STEP rows a batch), added to a CollectionVectors, with its build
 * steps run between batches as the thread runs them when idle. Prints the CPU per row of the adds
 * and of the build steps, and the page faults a row: on this project's VM a page written for the
 * first time costs about 20 µs (2.5 µs a row of 512 codes), so fresh buffers show here before
 * they show in a profile (where they are the self time of whatever wrote to them: Cell.push).
 *
 *   BENCH_TAKE_IN_ROWS=300000 npm run bench -- take-in   (default 300,000 rows: one of two shards at 200,000 passages)
 *   BENCH_VECTOR_CACHE=/tmp/dir keeps the generated vectors for later runs.
 */
import { loadavg } from 'node:os';
import { CollectionVectors } from '../../src/search-index/embedded/nearest/collection-vectors';
import { READ_STEP } from '../../src/search-index/embedded/nearest/share-reader';
import { figures, ownCpuMicros } from './lib/bench-kit';
import { clusteredVectors } from './lib/clustered-vectors';

const ROWS = Number(process.env.BENCH_TAKE_IN_ROWS ?? 300_000);
const set = clusteredVectors({ units: ROWS, cacheDir: process.env.BENCH_VECTOR_CACHE });
const d = set.dimension;
const vectors = new CollectionVectors(d, 8);
const faults = () => process.resourceUsage().minorPageFault;
let addMicros = 0;
let addFaults = 0;
let buildFaults = 0;
let buildMicros = 0;
for (let start = 0; start < ROWS; start += READ_STEP) {
  const rows = Math.min(READ_STEP, ROWS - start);
  const seqs = Float64Array.from({ length: rows }, (_, i) => 2 * (start + i));
  const fileIds = Array.from({ length: rows }, (_, i) => `file-${set.fileOf[start + i]}`);
  const batch = set.vectors.slice(start * d, (start + rows) * d);
  const before = ownCpuMicros();
  const faultsBefore = faults();
  vectors.add(seqs, fileIds, batch, 2);
  const added = ownCpuMicros();
  const faultsAdded = faults();
  while (vectors.building) vectors.buildStep(2);
  buildMicros += ownCpuMicros() - added;
  addMicros += added - before;
  buildFaults += faults() - faultsAdded;
  addFaults += faultsAdded - faultsBefore;
}
const report = figures('take-in', `${ROWS} rows, load ${loadavg()[0].toFixed(1)}`);
console.log(
  `${ROWS} rows in ${vectors.cells} cells; load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')}`,
);
report('add CPU a row', addMicros / ROWS, 'µs', null, 'lower');
report('build CPU a row', buildMicros / ROWS, 'µs', null, 'lower');
report('add page faults a row', addFaults / ROWS, 'faults', null, 'lower');
report('build page faults a row', buildFaults / ROWS, 'faults', null, 'lower');
report('take-in CPU a row', (addMicros + buildMicros) / ROWS, 'µs', null, 'lower');
