import { exactSearch, MetricKind } from 'usearch';
import { CentroidGroups, groupsOf, nearestCentroids, Partition, quantiseAtOneScale, resized, trainingRound } from './cells';
import { freeNow } from './free-now';
import { quantise } from './int8-codes';
import { type CodeHit, NearestHits, scanCell } from './nearest-hits';

/**
 * Below this many units a collection is one cell, scanned exactly: a native SIMD scan of 30,000 x
 * 512 codes takes about 0.7 ms, no more than probing cells, with nothing to approximate or build.
 * The scan grows linearly (2.5-4.5 ms at 100,000, about 40 ms at 1M; test/bench/vector-index.bench.ts
 * prints it by size), so above it the collection is partitioned into cells.
 */
export const EXACT_SCAN_BELOW = 30_000;
/**
 * A filter whose rows are at most this share of the collection is answered by an exact scan of
 * those rows: cheaper than probing cells past nine in ten rejected rows, and exact.
 */
export const FILTER_SCAN_SHARE = 0.15;
/**
 * Cells hold about this many times √units rows each: √units / CELL_SPREAD cells. Finding each row's
 * cell is one distance per centroid, most of a build, so fewer, larger cells build faster, but they
 * are more uneven and a search near a dense region scans the large ones. Measured at 1,000,000
 * clustered rows in one thread: 250 cells (spread 4, 8 probed) computed in 9.1 CPU-s instead of
 * 36.3 for 1,000 cells (32 probed), but the largest cell held 64,558 rows (27x the median, against
 * 12x) and a search cost 8.3 CPU-ms instead of 3.9 (at 1M through the adapter, p95 143 ms against
 * 52 ms at load 6-9, recall 0.995 against 1.000). So 1: the search targets come first.
 */
export const CELL_SPREAD = 1;

/** The cells a partition of `rows` rows has. */
export function cellCountFor(rows: number): number {
  return Math.max(2, Math.round(Math.sqrt(rows) / CELL_SPREAD));
}

/**
 * Cells probed per search when one thread holds the whole collection; each of several search
 * threads probes fewer (probedCellsPerShard). 32 when recall came from the codes alone; with the
 * float re-rank of k + min(k, 16) hits, a sweep (test/bench/probe-sweep.bench.ts) read recall@10
 * 1.000 at 1M and 0.998 at 3M generated vectors with 8 a thread of two (0.990 with 4): twice the
 * cheapest cells as margin, since real embeddings cluster looser than generated ones.
 */
export const PROBED_CELLS = 12;

/**
 * Cells each of `shards` search threads probes so that a search reads the codes one thread would
 * (shards · probed · √(n / shards) ≈ PROBED_CELLS · √n): the same share of each thread's rows as
 * one thread probing PROBED_CELLS cells of √n reads of all of them.
 */
export function probedCellsPerShard(shards: number): number {
  return Math.max(1, Math.round(PROBED_CELLS / Math.sqrt(shards)));
}
/** Rows whose new cell is found per step of a (re)partition; searches are served between steps. */
export const BUILD_STEP = 8_192;
/** The cells are recomputed when the collection has grown this much since they were. */
const REPARTITION_GROWTH = 4;
/** k-means: sampled rows per cell, and rounds (one per build step). */
const SAMPLE_PER_CELL = 32;
const TRAINING_ROUNDS = 6;

/** Bytes of codes a search thread keeps for a repeated filter: 32,768 rows of 512-d, a 1% filter at 3M rows. */
export const FILTER_GATHER_BYTES = 16 * 2 ** 20;

/** A narrow filter's live rows, gathered: their codes one after another, and their seqs. */
interface Gathered {
  /** The collection's instance (a number: a dropped collection's codes are not held through this). */
  of: number;
  /** The filter's file ordinals, sorted and joined. */
  key: string;
  codes: Int8Array;
  seqs: Float64Array;
}

/**
 * Cells being computed while the serving ones answer: sampled, trained, then each serving row's new
 * cell found in steps; the new cells are filled in one pass at the end, each allocated to its size.
 */
interface Repartition {
  /** The collection's size when the sample was taken. */
  sampledAt: number;
  sample: Int8Array;
  /** Codes of the centroids, all at one scale (see nearestCentroids). */
  centroids: Int8Array;
  /** The trained centroids' groups, which place rows in their cells. */
  groups?: CentroidGroups;
  rounds: number;
  /** Each serving cell's length when the assignment began, and the new cell of each of those rows (-1: dead then). */
  lengths: Int32Array;
  assigned: Int32Array[];
  /** The serving cell and position the assignment has reached. */
  cell: number;
  position: number;
  /** One step's rows (codes, serving cell, position), reused by every step and freed at the end (see assignStep). */
  step?: { codes: Int8Array; cellOf: Int32Array; positionOf: Int32Array };
}

/**
 * One collection's vectors in the search thread: int8 codes grouped in cells around k-means
 * centroids (an inverted file), with the store's `seq` and file of each row. A search scans the
 * PROBED_CELLS cells whose centroids are nearest the query, exactly; below EXACT_SCAN_BELOW units
 * every row is scanned (in chunks of CHUNK_ROWS), so the scan is exact. The cells are computed in build steps (sampling,
 * k-means rounds, then each row's new cell found BUILD_STEP rows at a time, then the new cells
 * filled at once) while the old cells keep serving, and recomputed when the collection has grown
 * REPARTITION_GROWTH times; a load from the store computes them once, when it ends. Codes are held
 * once (while the new cells are filled, the old cells are freed one by one as their rows move); no
 * float copy is kept.
 */
export class CollectionVectors {
  private serving: Partition;
  private repartition?: Repartition;
  /** The collection's size when the serving cells were sampled. */
  private partitionedAt = 0;
  private readonly fileOrdinal = new Map<string, number>();
  /** Live rows of each file, by ordinal. */
  private rowsOfFile = new Int32Array(64);
  /**
   * Seqs of each file's rows, by ordinal, so a narrow filter gathers its rows without a pass over
   * every row (at 1M that pass was most of a 1% filter's 26 ms of CPU). Removed rows stay listed
   * until the filter next reads the list (see liveSeqsOf).
   */
  private readonly seqsOfFile: number[][] = [];
  /** Rows a load under way will bring (0: none): the cells are computed once it ends, not as it grows. */
  private loading = 0;
  /** The last narrow filter's rows gathered in this thread, of whichever collection (see scanAllowed). */
  private static gathered?: Gathered;
  private static instances = 0;
  private readonly instance = CollectionVectors.instances++;

  constructor(
    readonly dimension: number,
    private readonly probedCells = PROBED_CELLS,
  ) {
    this.serving = new Partition(dimension);
  }

  get size(): number {
    return this.serving.where.size;
  }

  /** True while cells are due or being computed: the search thread calls `buildStep()` when idle. */
  get building(): boolean {
    return this.repartition !== undefined || this.repartitionDue;
  }

  get partitioned(): boolean {
    return this.serving.centroids !== undefined;
  }

  /** Cells of the inverted file; 1 while every row is scanned (in one or more chunks). */
  get cells(): number {
    return this.partitioned ? this.serving.cells.length : 1;
  }

  private get repartitionDue(): boolean {
    if (this.loading > 0 || this.size < EXACT_SCAN_BELOW) return false;
    return !this.partitioned || this.size >= REPARTITION_GROWTH * this.partitionedAt;
  }

  /**
   * A load of `rows` rows from the store begins: they are held as they come (one allocation while
   * the collection is one cell) and the cells are computed once, over all of them, after `endLoad()`,
   * instead of again at each fourfold growth on the way.
   */
  beginLoad(rows: number): void {
    this.loading = Math.max(1, rows);
    if (!this.partitioned) this.serving.reserve(rows);
  }

  endLoad(): void {
    this.loading = 0;
  }

  /** Adds rows; a seq already present is replaced. `vectors` holds `seqs.length` rows. */
  add(seqs: ArrayLike<number>, fileIds: string[], vectors: Float32Array, threads = 1): void {
    const d = this.dimension;
    this.remove(seqs);
    this.forgetGathered();
    const codes = new Int8Array(seqs.length * d);
    for (let i = 0; i < seqs.length; i++) quantise(vectors.subarray(i * d, (i + 1) * d), codes, i * d);
    const files = Int32Array.from(fileIds, (fileId) => this.ordinalOf(fileId));
    // While new cells are computed, rows added go to the serving ones and are moved with the rest.
    this.serving.add(codes, seqs, files, threads);
    // Copied into their cells: freed now, not at the thread's next collection (see freeNow).
    freeNow(codes);
    for (let i = 0; i < files.length; i++) {
      this.rowsOfFile[files[i]]++;
      this.seqsOfFile[files[i]].push(seqs[i]);
    }
  }

  remove(seqs: ArrayLike<number>): void {
    if (seqs.length > 0) this.forgetGathered();
    for (let i = 0; i < seqs.length; i++) {
      const file = this.serving.remove(seqs[i]);
      if (file >= 0) this.rowsOfFile[file]--;
    }
    // Positions stay put while new cells are computed: the assignment refers to them.
    if (!this.repartition) this.serving.compactWhereDead();
  }

  /** One step of computing the cells; returns whether more steps are due. */
  buildStep(threads: number): boolean {
    if (!this.repartition) {
      if (!this.repartitionDue) return false;
      this.repartition = this.startRepartition();
      return true;
    }
    const r = this.repartition;
    if (r.rounds < TRAINING_ROUNDS) {
      trainingRound(r.sample, r.centroids, this.dimension, threads);
      r.rounds++;
      if (r.rounds === TRAINING_ROUNDS) {
        r.groups = groupsOf(r.centroids, this.dimension);
        r.lengths = Int32Array.from(this.serving.cells, (cell) => cell.length);
        r.assigned = Array.from(r.lengths, (length) => new Int32Array(length).fill(-1));
      }
      return true;
    }
    if (r.cell < r.lengths.length) {
      this.assignStep(r, threads);
      return true;
    }
    if (r.step) freeNow(r.step.codes, r.step.cellOf, r.step.positionOf);
    r.step = undefined;
    this.serving = this.fill(r, threads);
    // Sized for the rows sampled, not for those that arrived while computing: a collection
    // ingested fast outgrows its first cells before they are done, and gets new ones right away.
    this.partitionedAt = r.sampledAt;
    this.repartition = undefined;
    this.serving.compactWhereDead();
    return this.building;
  }

  /**
   * The `k` nearest live rows to `query`, optionally among rows of `allowedFiles` only, by cosine
   * distance of the codes, nearest first.
   */
  search(query: Float32Array, k: number, allowedFiles?: readonly string[]): CodeHit[] {
    if (this.size === 0) return [];
    const q = new Int8Array(this.dimension);
    quantise(query, q);
    const cells = this.serving.cells;
    if (!allowedFiles) {
      const hits = new NearestHits(k);
      for (const c of this.probed(q)) scanCell(cells[c], q, k, hits);
      return hits.list();
    }

    const allowed = new Uint8Array(this.fileOrdinal.size);
    const ordinals: number[] = [];
    // Counted per file as rows come and go: no pass over every row to size the filter.
    let rows = 0;
    for (const fileId of allowedFiles) {
      const ordinal = this.fileOrdinal.get(fileId);
      if (ordinal === undefined || allowed[ordinal]) continue;
      allowed[ordinal] = 1;
      ordinals.push(ordinal);
      rows += this.rowsOfFile[ordinal];
    }
    if (rows === 0) return [];
    if (rows <= FILTER_SCAN_SHARE * this.size || !this.partitioned) return this.scanAllowed(q, k, ordinals, rows);
    // A broad filter: in each probed cell, enough nearest rows that k of them pass it in expectation, twice over.
    const share = rows / this.size;
    const probed = this.probed(q, Math.ceil(1 / share));
    const hits = new NearestHits(k);
    for (const c of probed) scanCell(cells[c], q, Math.ceil((2 * k) / share), hits, (p) => allowed[cells[c].files[p]] === 1);
    const passing = hits.list();
    return passing.length < Math.min(k, rows) ? this.scanAllowed(q, k, ordinals, rows) : passing;
  }

  /** The cells to scan: every chunk when there are no centroids, else the `probedCells` (times `widen`) nearest centroids. */
  private probed(q: Int8Array, widen = 1): number[] {
    const centroids = this.serving.centroids;
    const count = this.serving.cells.length;
    if (!centroids) return Array.from({ length: count }, (_, c) => c);
    const wanted = Math.min(count, this.probedCells * widen);
    if (wanted === count) return Array.from({ length: count }, (_, c) => c);
    const found = exactSearch(centroids, q, this.dimension, wanted, MetricKind.Cos, 1);
    return Array.from(found.keys, Number);
  }

  /**
   * Exact k nearest among the live rows of the files of `ordinals` (`rows` of them), gathered
   * through their seqs. Gathering is most of the cost: each row's codes are read from wherever its
   * cell holds them, a cache miss and a TLB miss per row (about 1 µs of CPU a row at 3M under
   * load, against 0.04 µs to scan it). So the last filter's gathered rows, when they fit
   * FILTER_GATHER_BYTES, are kept until a row is added or removed: a filter repeated from search to
   * search (a tenant's or a user's files) scans them again without gathering. A thread keeps one
   * filter's rows at a time, of whichever collection searched last.
   */
  private scanAllowed(q: Int8Array, k: number, ordinals: number[], rows: number): CodeHit[] {
    const d = this.dimension;
    const key = ordinals.length === 1 ? String(ordinals[0]) : Int32Array.from(ordinals).sort().join(',');
    const kept = CollectionVectors.gathered;
    let gathered = kept?.of === this.instance && kept.key === key ? kept : undefined;
    if (!gathered) {
      gathered = this.gather(ordinals, rows, key);
      CollectionVectors.gathered = gathered.codes.buffer.byteLength <= FILTER_GATHER_BYTES ? gathered : undefined;
    }
    const { codes, seqs } = gathered;
    const n = seqs.length;
    if (n === 0) return [];
    const found = exactSearch(codes, q, d, Math.min(k, n), MetricKind.Cos, 1);
    return Array.from(found.keys, (key, i) => ({ seq: seqs[Number(key)], distance: found.distances[i] }));
  }

  /** Rows of this collection came or went: the gathered rows of a filter may no longer be its rows. */
  private forgetGathered(): void {
    if (CollectionVectors.gathered?.of === this.instance) CollectionVectors.gathered = undefined;
  }

  private gather(ordinals: number[], rows: number, key: string): Gathered {
    const d = this.dimension;
    const { cells, where } = this.serving;
    const dataset = new Int8Array(rows * d);
    const seqs = new Float64Array(rows);
    let n = 0;
    for (const ordinal of ordinals) {
      for (const seq of this.liveSeqsOf(ordinal)) {
        const at = where.get(seq)!;
        const p = at % 2 ** 32;
        dataset.set(cells[Math.floor(at / 2 ** 32)].codes.subarray(p * d, (p + 1) * d), n * d);
        seqs[n++] = seq;
      }
    }
    return {
      of: this.instance,
      key,
      codes: n === rows ? dataset : dataset.subarray(0, n * d),
      seqs: n === rows ? seqs : seqs.subarray(0, n),
    };
  }

  /** The file's live seqs, each once: a list holding removed or replaced rows is rewritten first. */
  private liveSeqsOf(ordinal: number): number[] {
    const listed = this.seqsOfFile[ordinal];
    if (listed.length === this.rowsOfFile[ordinal]) return listed;
    const { cells, where } = this.serving;
    const seen = new Set<number>();
    const live = listed.filter((seq) => {
      const at = where.get(seq);
      if (at === undefined || seen.has(seq) || cells[Math.floor(at / 2 ** 32)].files[at % 2 ** 32] !== ordinal) return false;
      seen.add(seq);
      return true;
    });
    this.seqsOfFile[ordinal] = live;
    return live;
  }

  private startRepartition(): Repartition {
    const d = this.dimension;
    const cellCount = cellCountFor(this.size);
    const sampleRows = Math.min(this.size, cellCount * SAMPLE_PER_CELL);
    const sample = new Int8Array(sampleRows * d);
    // Every (size / sampleRows)-th live row, in cell order: spread over the whole collection.
    const stride = this.size / sampleRows;
    let live = 0;
    let taken = 0;
    for (const cell of this.serving.cells) {
      for (let p = 0; p < cell.length && taken < sampleRows; p++) {
        if (!cell.live[p]) continue;
        if (live++ >= taken * stride) sample.set(cell.codes.subarray(p * d, (p + 1) * d), d * taken++);
      }
    }
    const seeds = new Float32Array(cellCount * d);
    for (let c = 0; c < cellCount; c++) {
      const row = Math.floor((c * taken) / cellCount);
      for (let j = 0; j < d; j++) seeds[c * d + j] = sample[row * d + j];
    }
    const centroids = new Int8Array(cellCount * d);
    quantiseAtOneScale(seeds, centroids, d);
    return {
      sampledAt: this.size,
      sample: sample.subarray(0, taken * d),
      centroids,
      rounds: 0,
      lengths: new Int32Array(0),
      assigned: [],
      cell: 0,
      position: 0,
    };
  }

  /**
   * Finds the new cell of up to BUILD_STEP live rows of the serving cells (those there when the
   * assignment began). The step's buffers (4 MiB of 512-d codes) are allocated once per
   * repartition, not once per step: allocated per step, a thread's repartition of a million rows
   * left hundreds of them to its collector, and its malloc arena kept the room they took.
   */
  private assignStep(r: Repartition, threads: number): void {
    const d = this.dimension;
    r.step ??= { codes: new Int8Array(BUILD_STEP * d), cellOf: new Int32Array(BUILD_STEP), positionOf: new Int32Array(BUILD_STEP) };
    const { codes, cellOf, positionOf } = r.step;
    let n = 0;
    while (n < BUILD_STEP && r.cell < r.lengths.length) {
      const cell = this.serving.cells[r.cell];
      if (r.position >= r.lengths[r.cell]) {
        r.cell++;
        r.position = 0;
        continue;
      }
      const p = r.position++;
      if (!cell.live[p]) continue;
      codes.set(cell.codes.subarray(p * d, (p + 1) * d), n * d);
      cellOf[n] = r.cell;
      positionOf[n++] = p;
    }
    const nearest = nearestCentroids(r.centroids, codes, n, d, threads, r.groups);
    for (let i = 0; i < n; i++) r.assigned[cellOf[i]][positionOf[i]] = nearest[i];
  }

  /** The new cells, each allocated to its size plus room to grow, holding every live serving row. */
  private fill(r: Repartition, threads: number): Partition {
    const d = this.dimension;
    const cells = this.serving.cells;
    // Rows added since the assignment began get their cells now.
    let late = 0;
    cells.forEach((cell, c) => {
      for (let p = r.lengths[c] ?? 0; p < cell.length; p++) if (cell.live[p]) late++;
    });
    const lateCodes = new Int8Array(late * d);
    let n = 0;
    cells.forEach((cell, c) => {
      for (let p = r.lengths[c] ?? 0; p < cell.length; p++)
        if (cell.live[p]) lateCodes.set(cell.codes.subarray(p * d, (p + 1) * d), d * n++);
    });
    const lateCells = nearestCentroids(r.centroids, lateCodes, late, d, threads, r.groups);
    const cellCount = r.centroids.length / d;
    const target = (c: number, p: number, next: () => number) => (p < (r.lengths[c] ?? 0) ? r.assigned[c][p] : next());
    const counts = new Int32Array(cellCount);
    let l = 0;
    cells.forEach((cell, c) => {
      for (let p = 0; p < cell.length; p++) if (cell.live[p]) counts[target(c, p, () => lateCells[l++])]++;
    });
    const capacities = counts.map((count) => count + Math.max(16, count >> 3));
    const next = new Partition(d, r.centroids, capacities, this.serving.where);
    l = 0;
    cells.forEach((cell, c) => {
      for (let p = 0; p < cell.length; p++) {
        if (!cell.live[p]) continue;
        const to = target(c, p, () => lateCells[l++]);
        const position = next.cells[to].push(cell.codes, p * d, cell.seqs[p], cell.files[p]);
        next.where.set(cell.seqs[p], to * 2 ** 32 + position);
      }
      // Its rows moved: its buffers go now, so the codes are held about once, not twice, at the end.
      cell.release();
    });
    return next;
  }

  private ordinalOf(fileId: string): number {
    let ordinal = this.fileOrdinal.get(fileId);
    if (ordinal === undefined) {
      ordinal = this.fileOrdinal.size;
      this.fileOrdinal.set(fileId, ordinal);
      if (ordinal === this.rowsOfFile.length) this.rowsOfFile = resized(this.rowsOfFile, 2 * ordinal, (n) => new Int32Array(n));
      this.seqsOfFile.push([]);
    }
    return ordinal;
  }
}
