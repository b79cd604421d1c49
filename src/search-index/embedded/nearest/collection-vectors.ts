import { exactSearch, Index, MetricKind, ScalarKind } from 'usearch';
import { CodeRows, quantise } from './int8-codes';

/**
 * Below this many units a collection is searched by an exact scan of its int8 codes: a native SIMD
 * scan of 30,000 x 512 codes takes about 0.7 ms, no more than a graph search with its re-ranking
 * (about 1 ms), with nothing to approximate, no graph memory and nothing to build. The scan grows
 * linearly (2.5-4.5 ms at 100,000, about 40 ms at 1M; test/bench/vector-index.bench.ts prints it
 * by size), the graph search barely, so above it the HNSW graph takes over.
 */
export const EXACT_SCAN_BELOW = 30_000;
/**
 * A filter whose rows are at most this share of the collection is answered by an exact scan of
 * those rows: cheaper than walking the graph past nine in ten rejected neighbours, and exact.
 */
export const FILTER_SCAN_SHARE = 0.15;
/**
 * Graph candidates per search, re-ranked exactly on their codes. Recall@10 on clustered 512-d
 * vectors at 200,000: 0.94 with 256, 0.967 with 512, 0.968 with 1,024 (at 5x the time).
 */
export const GRAPH_CANDIDATES = 512;
/** Rows added to the graph per step while building; searches are served between steps. */
export const BUILD_STEP = 4_096;
/**
 * HNSW parameters, measured at 200,000 x 512 (512 candidates): 24 links per node and 96 candidates
 * while linking reach recall 0.967; 16 links 0.958; 16 links with 64 while linking build 1.5x faster
 * but reach 0.90.
 */
const CONNECTIVITY = 24;
const EXPANSION_ADD = 96;
const EXPANSION_SEARCH = 64;
/** Dead rows are compacted away past this share; the graph is rebuilt past it too. */
const DEAD_SHARE = 0.25;

export interface CodeHit {
  seq: number;
  /** Cosine distance between the int8 codes (within about 0.003 of the float distance). */
  distance: number;
}

/**
 * One collection's vectors in the search thread: int8 codes in rows, the store's `seq` and file of
 * each row, and an HNSW graph (usearch, keyed by seq) once the collection is large enough. Rows are
 * appended; a removed row is marked dead and compacted away later. The graph is built in steps of
 * BUILD_STEP rows so that searches of every collection go on meanwhile (by exact scan for this
 * one until the graph has caught up).
 */
export class CollectionVectors {
  private readonly rows: CodeRows;
  private seqs: Float64Array;
  private files: Int32Array;
  private live: Uint8Array;
  private readonly rowOfSeq = new Map<number, number>();
  private readonly fileOrdinal = new Map<string, number>();
  private dead = 0;
  private graph?: Index;
  /** Rows below this have been offered to the graph (dead ones skipped). */
  private graphCursor = 0;
  /** Seqs removed from the graph since it was built; usearch keeps their nodes as tombstones. */
  private graphRemoved = 0;

  constructor(readonly dimension: number) {
    this.rows = new CodeRows(dimension);
    this.seqs = new Float64Array(1024);
    this.files = new Int32Array(1024);
    this.live = new Uint8Array(1024);
  }

  get size(): number {
    return this.rowOfSeq.size;
  }

  /** True while a graph is due and not complete: the search thread calls `buildStep()` when idle. */
  get building(): boolean {
    return this.size >= EXACT_SCAN_BELOW && (!this.graph || this.graphCursor < this.rows.length);
  }

  get graphReady(): boolean {
    return this.graph !== undefined && this.graphCursor >= this.rows.length;
  }

  /** Rows not in the graph yet, scanned exactly beside the graph's candidates. */
  private get tail(): number {
    return this.rows.length - this.graphCursor;
  }

  /** Adds rows; a seq already present is replaced. `vectors` holds `seqs.length` rows. */
  add(seqs: ArrayLike<number>, fileIds: string[], vectors: Float32Array): void {
    const d = this.dimension;
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i];
      if (this.rowOfSeq.has(seq)) this.remove([seq]);
      const row = this.rows.push(vectors.subarray(i * d, (i + 1) * d));
      this.ensureCapacity(row + 1);
      this.seqs[row] = seq;
      this.files[row] = this.ordinalOf(fileIds[i]);
      this.live[row] = 1;
      this.rowOfSeq.set(seq, row);
    }
    // New rows join the graph in idle steps; until then searches scan them (the tail) exactly.
  }

  remove(seqs: ArrayLike<number>): void {
    for (let i = 0; i < seqs.length; i++) {
      const row = this.rowOfSeq.get(seqs[i]);
      if (row === undefined) continue;
      this.rowOfSeq.delete(seqs[i]);
      this.live[row] = 0;
      this.dead++;
      if (this.graph && row < this.graphCursor) {
        this.graph.remove(BigInt(seqs[i]));
        this.graphRemoved++;
      }
    }
    if (this.size < EXACT_SCAN_BELOW && this.graph) this.dropGraph();
    else if (this.graph && this.graphRemoved > DEAD_SHARE * Math.max(1, this.graph.size())) this.dropGraph();
    if (this.dead > Math.max(1024, DEAD_SHARE * this.rows.length) && !this.graph) this.compact();
  }

  /** One step of graph building; returns false when there is nothing left to build. */
  buildStep(threads: number): boolean {
    if (!this.building) return false;
    if (this.dead > DEAD_SHARE * this.rows.length && !this.graph) this.compact();
    if (!this.graph) {
      this.graph = new Index({
        dimensions: this.dimension,
        metric: MetricKind.Cos,
        quantization: ScalarKind.I8,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: EXPANSION_SEARCH,
        multi: false,
      });
      this.graphCursor = 0;
      this.graphRemoved = 0;
    }
    this.extendGraph(Math.min(this.rows.length, this.graphCursor + BUILD_STEP), threads);
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
    if (allowedFiles) return this.searchAllowed(q, k, allowedFiles);
    if (!this.graph || this.tail > this.graphCursor) return this.scan(q, k, this.liveRows());
    const found = this.graphCandidates(q, Math.max(GRAPH_CANDIDATES, 2 * k));
    for (let r = this.graphCursor; r < this.rows.length; r++) if (this.live[r]) found.push(r);
    return this.scan(q, k, found);
  }

  /** Rows of the allowed files: scanned exactly when few, else the graph's candidates filtered. */
  private searchAllowed(q: Int8Array, k: number, allowedFiles: readonly string[]): CodeHit[] {
    const allowed = new Uint8Array(this.fileOrdinal.size);
    let any = false;
    for (const fileId of allowedFiles) {
      const ordinal = this.fileOrdinal.get(fileId);
      if (ordinal === undefined) continue;
      allowed[ordinal] = 1;
      any = true;
    }
    if (!any) return [];
    const rows: number[] = [];
    for (let r = 0; r < this.rows.length; r++) if (this.live[r] && allowed[this.files[r]]) rows.push(r);
    if (!this.graph || this.tail > this.graphCursor || rows.length <= FILTER_SCAN_SHARE * this.size) return this.scan(q, k, rows);
    // A broad filter: enough graph candidates that k of them pass it in expectation, twice over.
    const wanted = Math.min(this.size, Math.ceil(Math.max(GRAPH_CANDIDATES, 2 * k) * (this.size / rows.length)));
    const passing = this.graphCandidates(q, wanted).filter((r) => allowed[this.files[r]]);
    if (passing.length < Math.min(k, rows.length)) return this.scan(q, k, rows);
    for (let r = this.graphCursor; r < this.rows.length; r++) if (this.live[r] && allowed[this.files[r]]) passing.push(r);
    return this.scan(q, k, passing);
  }

  /** Rows of the graph's nearest `wanted` seqs (live ones). */
  private graphCandidates(q: Int8Array, wanted: number): number[] {
    const matches = this.graph!.search(codeFloats(q), Math.min(wanted, this.graph!.size()), 1);
    const rows: number[] = [];
    for (const key of matches.keys) {
      const row = this.rowOfSeq.get(Number(key));
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }

  /** Exact k nearest among `rows`, by a native scan of their codes. */
  private scan(q: Int8Array, k: number, rows: number[]): CodeHit[] {
    if (rows.length === 0) return [];
    const d = this.dimension;
    let dataset: Int8Array;
    if (rows.length === this.rows.length) dataset = this.rows.prefix();
    else {
      dataset = new Int8Array(rows.length * d);
      for (let i = 0; i < rows.length; i++) dataset.set(this.rows.row(rows[i]), i * d);
    }
    const found = exactSearch(dataset, q, d, Math.min(k, rows.length), MetricKind.Cos, 1);
    const hits: CodeHit[] = [];
    for (let i = 0; i < found.keys.length; i++) {
      const row = rows[Number(found.keys[i])];
      hits.push({ seq: this.seqs[row], distance: found.distances[i] });
    }
    return hits;
  }

  private liveRows(): number[] {
    const rows: number[] = [];
    for (let r = 0; r < this.rows.length; r++) if (this.live[r]) rows.push(r);
    return rows;
  }

  private extendGraph(to: number, threads = 1): void {
    const d = this.dimension;
    const from = this.graphCursor;
    const keys: bigint[] = [];
    const vectors = new Float32Array((to - from) * d);
    const codes = this.rows.codes;
    let n = 0;
    for (let r = from; r < to; r++) {
      if (!this.live[r]) continue;
      keys.push(BigInt(this.seqs[r]));
      for (let i = 0; i < d; i++) vectors[n * d + i] = codes[r * d + i] / 127;
      n++;
    }
    if (n > 0) this.graph!.add(BigUint64Array.from(keys), vectors.subarray(0, n * d), threads);
    this.graphCursor = to;
  }

  private dropGraph(): void {
    this.graph = undefined;
    this.graphCursor = 0;
    this.graphRemoved = 0;
  }

  /** Moves live rows down over dead ones. Only without a graph (the graph is keyed by seq, not row). */
  private compact(): void {
    let to = 0;
    for (let from = 0; from < this.rows.length; from++) {
      if (!this.live[from]) continue;
      if (from !== to) {
        this.rows.move(from, to);
        this.seqs[to] = this.seqs[from];
        this.files[to] = this.files[from];
        this.live[to] = 1;
        this.rowOfSeq.set(this.seqs[to], to);
      }
      to++;
    }
    this.live.fill(0, to);
    this.rows.truncate(to);
    this.dead = 0;
  }

  private ensureCapacity(rows: number): void {
    if (rows <= this.seqs.length) return;
    const capacity = Math.max(rows, this.seqs.length * 2);
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.seqs = grow(this.seqs, (n) => new Float64Array(n));
    this.files = grow(this.files, (n) => new Int32Array(n));
    this.live = grow(this.live, (n) => new Uint8Array(n));
  }

  private ordinalOf(fileId: string): number {
    let ordinal = this.fileOrdinal.get(fileId);
    if (ordinal === undefined) {
      ordinal = this.fileOrdinal.size;
      this.fileOrdinal.set(fileId, ordinal);
    }
    return ordinal;
  }
}

/**
 * Codes as the floats usearch quantises back to the same codes (it casts a float in [-1, 1] to
 * round(x * 127)); handing it the int8 array itself would be read as floats of -127..127 and
 * clamped to ±1.
 */
function codeFloats(codes: Int8Array): Float32Array {
  return Float32Array.from(codes, (c) => c / 127);
}
