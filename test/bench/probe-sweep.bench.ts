/*
 * Probed cells (and the float re-ranking margin) against CPU a search and recall@10, in one process,
 * on the clustered vectors of vector-index.bench.ts: the collection split in SEARCH_THREADS shards by
 * seq as the search threads hold it, each shard's CollectionVectors built as a load builds it, then
 * every setting searched over the same queries. A search's CPU is the sum of its shards' (what the
 * threads spend); the float re-ranking of the candidates is the adapter's, done here from the set.
 *
 *   BENCH_UNITS=1000000 BENCH_VECTOR_CACHE=<dir> node --no-node-snapshot -r ./scripts/swc-register.js test/bench/probe-sweep.bench.ts
 *   BENCH_PROBES=8,12,16,23,32 (cells per shard)  BENCH_MARGINS=0,10,20 (candidates past k)  BENCH_QUERIES=200
 *   BENCH_FILTER_ROUNDS=1 (rounds of the 1% filter's searches; 0: none)
 */
import { cpus, loadavg } from 'node:os';
import { exactSearch, MetricKind } from 'usearch';
import { CollectionVectors, probedCellsPerShard } from '../../src/search-index/embedded/nearest/collection-vectors';
import { SEARCH_THREADS } from '../../src/search-index/embedded/nearest/nearest-threads';
import { clusteredVectors, prng } from './lib/clustered-vectors';

const UNITS = Number(process.env.BENCH_UNITS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const SHARDS = Number(process.env.BENCH_SHARDS ?? SEARCH_THREADS);
const PROBES = (process.env.BENCH_PROBES ?? '8,12,16,23').split(',').filter(Boolean).map(Number);
const MARGINS = (process.env.BENCH_MARGINS ?? '0,10').split(',').filter(Boolean).map(Number);
const K = 10;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');

function main(): void {
  const set = clusteredVectors({ units: UNITS, cacheDir: process.env.BENCH_VECTOR_CACHE });
  const d = set.dimension;
  console.log(`${UNITS.toLocaleString('en')} x ${d}, ${SHARDS} shards, load ${load()} on ${cpus().length} cores`);
  const fileIdOf = (r: number) => `fle_${set.fileOf[r]}`;
  const seqOf = (r: number) => r + 1;
  const shards = Array.from({ length: SHARDS }, () => new CollectionVectors(d, probedCellsPerShard(SHARDS)));
  const buildCpu = process.cpuUsage();
  shards.forEach((vectors, shard) => {
    const rows: number[] = [];
    for (let r = 0; r < UNITS; r++) if (seqOf(r) % SHARDS === shard) rows.push(r);
    vectors.beginLoad(rows.length);
    for (let at = 0; at < rows.length; at += 2_048) {
      const part = rows.slice(at, at + 2_048);
      const floats = new Float32Array(part.length * d);
      part.forEach((r, i) => floats.set(set.row(r), i * d));
      vectors.add(part.map(seqOf), part.map(fileIdOf), floats);
    }
    vectors.endLoad();
    while (vectors.buildStep(cpus().length));
  });
  const built = process.cpuUsage(buildCpu);
  console.log(`built in ${((built.user + built.system) / 1e6).toFixed(1)} CPU-s; cells per shard ${shards[0].cells}; load ${load()}`);

  const queries = set.queries(QUERIES);
  const pick = prng(99);
  const allowedFiles = new Set<number>();
  for (let f = 0; f < set.files; f++) if (pick() < 0.01) allowedFiles.add(f);
  const filter = [...allowedFiles].map((f) => `fle_${f}`);
  const exact = (q: Float32Array, allowed?: Set<number>): Set<number> => {
    if (!allowed) {
      const found = exactSearch(set.vectors, q, d, K, MetricKind.IP, cpus().length);
      return new Set(Array.from(found.keys, (key) => seqOf(Number(key))));
    }
    const rows: number[] = [];
    for (let r = 0; r < UNITS; r++) if (allowed.has(set.fileOf[r])) rows.push(r);
    const scored = rows.map((r) => ({ r, s: dot(set.row(r), q) })).sort((a, b) => b.s - a.s);
    return new Set(scored.slice(0, K).map(({ r }) => seqOf(r)));
  };
  const truth = queries.map((q) => exact(q));
  const filteredTruth = queries.map((q) => exact(q, allowedFiles));

  const search = (q: Float32Array, wanted: number, fileIds?: string[]): number[] => {
    const candidates = shards.flatMap((vectors) => vectors.search(q, wanted, fileIds));
    candidates.sort((a, b) => a.distance - b.distance);
    // The adapter re-ranks the candidates by their float vectors.
    return candidates
      .slice(0, wanted)
      .map(({ seq }) => ({ seq, s: dot(set.row(seq - 1), q) }))
      .sort((a, b) => b.s - a.s)
      .slice(0, K)
      .map(({ seq }) => seq);
  };
  const measure = (label: string, wanted: number, expected: Set<number>[], fileIds?: string[]) => {
    for (const q of queries.slice(0, 10)) search(q, wanted, fileIds);
    let found = 0;
    const cpu = process.cpuUsage();
    const answers = queries.map((q) => search(q, wanted, fileIds));
    const used = process.cpuUsage(cpu);
    answers.forEach((answer, i) => (found += answer.filter((seq) => expected[i].has(seq)).length));
    const cpuMs = (used.user + used.system) / 1000 / queries.length;
    console.log(`${label}: ${cpuMs.toFixed(2)} CPU-ms a search, recall@10 ${(found / (queries.length * K)).toFixed(4)}; load ${load()}`);
  };
  for (const probes of PROBES) {
    for (const vectors of shards) Object.assign(vectors, { probedCells: probes });
    for (const margin of MARGINS) measure(`probes ${probes}/shard, candidates k+${margin}`, K + margin, truth);
  }
  for (let round = Number(process.env.BENCH_FILTER_ROUNDS ?? 1); round > 0; round--)
    measure(`filter keeping ${allowedFiles.size} of ${set.files} files`, 2 * K, filteredTruth, filter);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

main();
