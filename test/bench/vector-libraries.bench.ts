/*
 * The library comparison behind the embedded vector index: every candidate side by side on the
 * same generated vectors (test/bench/lib/clustered-vectors.ts), each in a child process of its own
 * so its memory is its own.
 *
 * For each candidate: build throughput from vectors already in memory (what a rebuild from the
 * store costs), search latency one query at a time (k=10, p50/p95), recall@10 against an exact
 * scan, the same with a filter keeping 1% of the files, and the memory the index adds (RSS).
 *
 * Candidates that are not dependencies of the service are measured when installed beside it:
 *   npm install --no-save usearch@2.25.3 hnswlib-node@3.0.0 @lancedb/lancedb@0.31.0 apache-arrow@18
 * and skipped with a line saying so otherwise.
 *
 *   BENCH_UNITS=100000 node --no-node-snapshot -r ./scripts/swc-register.js test/bench/vector-libraries.bench.ts
 *   (BENCH_CANDIDATES=usearch-i8,hnswlib to run some only)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusteredVectors, ClusteredSet, exactTopK } from './lib/clustered-vectors';
import { percentile, report } from './lib/bench-kit';

const BENCH = 'vector-libraries';
const UNITS = Number(process.env.BENCH_UNITS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const FILTER_SHARE = 0.01;
const K = 10;

interface Searcher {
  search(query: Float32Array, k: number): Promise<number[]> | number[];
  /** A k-NN among the rows of the allowed files only; null when the candidate cannot filter. */
  searchAllowed?(query: Float32Array, k: number, allowedFiles: Set<number>): Promise<number[]> | number[];
  notes: string;
}

type Candidate = (set: ClusteredSet, dir: string) => Promise<Searcher>;

const tryRequire = (name: string): any => {
  try {
    return require(name);
  } catch {
    return null;
  }
};

const candidates: Record<string, { needs: string; make: Candidate }> = {
  'sqlite-vec': {
    needs: 'sqlite-vec',
    make: async (set, dir) => {
      const Database = require('better-sqlite3');
      const db = new Database(join(dir, 'vec.db'));
      db.pragma('journal_mode = WAL');
      db.pragma('mmap_size = 4294967296');
      require('sqlite-vec').load(db);
      db.exec(`CREATE VIRTUAL TABLE v USING vec0(file_id INTEGER, embedding FLOAT[${set.dimension}] distance_metric=L2)`);
      const insert = db.prepare('INSERT INTO v (rowid, file_id, embedding) VALUES (?, ?, ?)');
      const rows = set.vectors.length / set.dimension;
      db.transaction(() => {
        for (let r = 0; r < rows; r++) insert.run(BigInt(r + 1), BigInt(set.fileOf[r]), blob(set.row(r)));
      })();
      const knn = db.prepare('SELECT rowid FROM v WHERE embedding MATCH ? AND k = ?').pluck();
      const filtered = db
        .prepare('SELECT rowid FROM v WHERE embedding MATCH ? AND k = ? AND file_id IN (SELECT value FROM json_each(?))')
        .pluck();
      return {
        search: (q, k) => (knn.all(blob(q), k) as number[]).map((id) => id - 1),
        searchAllowed: (q, k, files) => (filtered.all(blob(q), k, JSON.stringify([...files])) as number[]).map((id) => id - 1),
        notes: 'exact scan (vec0, L2 on unit vectors), metadata column filter; synchronous',
      };
    },
  },
  'js-scan-f32': {
    needs: '',
    make: async (set) => ({
      search: (q, k) => exactTopK(set, q, k),
      searchAllowed: (q, k, files) => exactTopK(set, q, k, (r) => files.has(set.fileOf[r])),
      notes: 'exact scan in JavaScript over float32 rows',
    }),
  },
  'usearch-i8': { needs: 'usearch', make: (set) => usearchLibrary(set, 'i8') },
  'usearch-f16': { needs: 'usearch', make: (set) => usearchLibrary(set, 'f16') },
  'usearch-codes (chosen)': {
    needs: 'usearch',
    make: async (set) => {
      // The service's own structure (src/search-index/embedded/nearest): per-vector-scaled int8 codes
      // in cells around k-means centroids, the nearest cells scanned exactly, filters scanned exactly.
      const { CollectionVectors } = require('../../src/search-index/embedded/nearest/collection-vectors');
      const rows = set.vectors.length / set.dimension;
      const vectors = new CollectionVectors(set.dimension);
      vectors.add(
        Float64Array.from({ length: rows }, (_, r) => r),
        Array.from(set.fileOf, (f) => `f${f}`),
        set.vectors,
        cpus().length,
      );
      while (vectors.buildStep(cpus().length));
      const seqs = (hits: { seq: number }[]) => hits.map((h) => h.seq);
      return {
        search: (q, k) => seqs(vectors.search(q, k)),
        searchAllowed: (q, k, files) =>
          seqs(
            vectors.search(
              q,
              k,
              [...files].map((f) => `f${f}`),
            ),
          ),
        notes:
          'per-vector-scaled int8 codes in cells around k-means centroids (an inverted file), the 32 nearest cells scanned exactly with usearch exactSearch (native SIMD), a filter of few rows scanned exactly; in a search thread',
      };
    },
  },
  hnswlib: {
    needs: 'hnswlib-node',
    make: async (set) => {
      const { HierarchicalNSW } = require('hnswlib-node');
      const rows = set.vectors.length / set.dimension;
      const index = new HierarchicalNSW('ip', set.dimension);
      index.initIndex(rows, 16, 100, 100);
      for (let r = 0; r < rows; r++) index.addPoint(Array.from(set.row(r)), r);
      index.setEf(96);
      return {
        search: (q, k) => index.searchKnn(Array.from(q), k).neighbors,
        searchAllowed: (q, k, files) => index.searchKnn(Array.from(q), k, (label: number) => files.has(set.fileOf[label])).neighbors,
        notes:
          'HNSW (M=16, ef_construction=100, ef=96), float32, filter by a JS callback per visited node; single-threaded build; synchronous',
      };
    },
  },
  lancedb: {
    needs: '@lancedb/lancedb',
    make: async (set, dir) => {
      const lancedb = require('@lancedb/lancedb');
      const arrow = require('apache-arrow');
      const db = await lancedb.connect(join(dir, 'lance'));
      const rows = set.vectors.length / set.dimension;
      const schema = new arrow.Schema([
        new arrow.Field('id', new arrow.Int32()),
        new arrow.Field('file', new arrow.Int32()),
        new arrow.Field('vector', new arrow.FixedSizeList(set.dimension, new arrow.Field('item', new arrow.Float32()))),
      ]);
      const table = await db.createEmptyTable('units', schema);
      const BATCH = 50_000;
      for (let start = 0; start < rows; start += BATCH) {
        const data = [];
        for (let r = start; r < Math.min(rows, start + BATCH); r++)
          data.push({ id: r, file: set.fileOf[r], vector: Array.from(set.row(r)) });
        await table.add(data);
      }
      await table.createIndex('vector', {
        config: lancedb.Index.hnswSq({ distanceType: 'cosine', numPartitions: Math.max(1, Math.round(rows / 100_000)) }),
      });
      await table.createIndex('file', { config: lancedb.Index.btree() });
      return {
        search: async (q, k) =>
          (await table.vectorSearch(Array.from(q)).distanceType('cosine').limit(k).select(['id']).toArray()).map((r: any) => r.id),
        searchAllowed: async (q, k, files) =>
          (
            await table
              .vectorSearch(Array.from(q))
              .distanceType('cosine')
              .where(`file IN (${[...files].join(',')})`)
              .limit(k)
              .select(['id'])
              .toArray()
          ).map((r: any) => r.id),
        notes: 'IVF + HNSW + scalar quantisation (one partition per 100k rows), prefilter by SQL where; asynchronous (Rust threads)',
      };
    },
  },
};

/** usearch as its README uses it: float vectors in, its own quantisation. */
async function usearchLibrary(set: ClusteredSet, quantization: 'i8' | 'f16'): Promise<Searcher> {
  const { Index, MetricKind } = require('usearch');
  const index = new Index({
    dimensions: set.dimension,
    metric: MetricKind.Cos,
    quantization,
    connectivity: 16,
    expansion_add: 96,
    expansion_search: 96,
    multi: false,
  });
  const rows = set.vectors.length / set.dimension;
  index.add(
    BigUint64Array.from({ length: rows }, (_, r) => BigInt(r)),
    set.vectors,
    cpus().length,
  );
  return {
    search: (q, k) => Array.from(index.search(q, k, 1).keys as BigUint64Array, Number),
    notes: `HNSW (M=16, ef_add=96, ef_search=96), ${quantization}; no filtered search in the Node binding; synchronous`,
  };
}

const blob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

async function runCandidate(name: string): Promise<void> {
  const set = clusteredVectors({ units: UNITS });
  const dir = mkdtempSync(join(tmpdir(), `wcs-lib-${name}-`));
  const rows = set.vectors.length / set.dimension;
  const queries = set.queries(QUERIES);
  const allowedFiles = new Set<number>();
  const pick = (() => {
    let s = 99;
    return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  })();
  for (let f = 0; f < set.files; f++) if (pick() < FILTER_SHARE) allowedFiles.add(f);
  if (allowedFiles.size === 0) allowedFiles.add(0);
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const searcher = await candidates[name].make(set, dir);
  const buildSeconds = (performance.now() - started) / 1000;
  global.gc?.();
  const rssAfter = process.memoryUsage().rss;

  const measure = async (label: string, run: (q: Float32Array) => Promise<number[]> | number[], allowed?: (r: number) => boolean) => {
    await run(queries[0]);
    const times: number[] = [];
    let found = 0;
    for (const q of queries) {
      const t = performance.now();
      const got = await run(q);
      times.push(performance.now() - t);
      const exact = new Set(exactTopK(set, q, K, allowed));
      found += got.slice(0, K).filter((r) => exact.has(r)).length;
    }
    times.sort((a, b) => a - b);
    return { label, p50: percentile(times, 50), p95: percentile(times, 95), recall: found / (queries.length * K) };
  };
  const plain = await measure('all', (q) => searcher.search(q, K));
  const filtered = searcher.searchAllowed
    ? await measure(
        '1% of files',
        (q) => searcher.searchAllowed!(q, K, allowedFiles),
        (r) => allowedFiles.has(set.fileOf[r]),
      )
    : null;
  process.stdout.write(
    `RESULT ${JSON.stringify({
      name,
      rows,
      buildPerSecond: rows / buildSeconds,
      rssMiB: (rssAfter - rssBefore) / 2 ** 20,
      plain,
      filtered,
      notes: searcher.notes,
    })}\n`,
  );
  rmSync(dir, { recursive: true, force: true });
}

function main(): void {
  const only = process.env.BENCH_CANDIDATES?.split(',');
  console.log(
    `${UNITS} units x 512, ${QUERIES} queries, k=${K}; load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')} on ${cpus().length} cores`,
  );
  for (const [name, { needs }] of Object.entries(candidates)) {
    if (only && !only.includes(name)) continue;
    if (needs && !tryRequire(needs)) {
      console.log(`${name}: skipped (${needs} is not installed; see the top of this file)`);
      continue;
    }
    const child = spawnSync(process.execPath, ['--expose-gc', '-r', './scripts/swc-register.js', __filename, name], {
      encoding: 'utf8',
      env: process.env,
      maxBuffer: 1 << 24,
    });
    const line = child.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    if (!line) {
      console.log(`${name}: failed (${child.status}) ${child.stderr.slice(-2000)}`);
      continue;
    }
    const r = JSON.parse(line.slice(7));
    const fmt = (m: { p50: number; p95: number; recall: number } | null) =>
      m ? `p50 ${m.p50.toFixed(2)} ms, p95 ${m.p95.toFixed(2)} ms, recall@10 ${m.recall.toFixed(3)}` : 'no filtered search';
    console.log(
      `${name}: build ${r.buildPerSecond.toFixed(0)}/s, +${r.rssMiB.toFixed(0)} MiB; ${fmt(r.plain)}; 1% filter: ${fmt(r.filtered)} — ${r.notes}`,
    );
    const target = `comparison at ${r.rows} units (library choice; no target)`;
    report({ bench: BENCH, metric: `${name}_p95`, value: r.plain.p95, unit: 'ms', baseline: null, ratio: null, target });
    report({
      bench: BENCH,
      metric: `${name}_recall_at_10`,
      value: r.plain.recall,
      unit: 'fraction',
      baseline: 1,
      ratio: r.plain.recall,
      target,
    });
    report({ bench: BENCH, metric: `${name}_build`, value: r.buildPerSecond, unit: 'vectors/s', baseline: null, ratio: null, target });
    if (r.filtered) {
      report({ bench: BENCH, metric: `${name}_filtered_p95`, value: r.filtered.p95, unit: 'ms', baseline: null, ratio: null, target });
      report({
        bench: BENCH,
        metric: `${name}_filtered_recall_at_10`,
        value: r.filtered.recall,
        unit: 'fraction',
        baseline: 1,
        ratio: r.filtered.recall,
        target,
      });
    }
  }
}

const candidate = process.argv[2];
if (candidate) runCandidate(candidate).catch((e) => (console.error(e), process.exit(1)));
else main();
