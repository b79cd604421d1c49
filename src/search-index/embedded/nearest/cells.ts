// Cells of one collection's int8 codes (Cell, Partition), and the k-means that places rows in them.
import { exactSearch, MetricKind } from 'usearch';
import { codeBuffer, resizedCodes } from './code-buffer';
import { freeNow } from './free-now';
import { SeqMap } from './seq-map';

/** A cell's dead rows are compacted away past this share. */
const DEAD_SHARE = 0.25;
/**
 * Rows per buffer of a collection not (yet) in cells: a load's rows come in chunks of this many
 * (32 MiB of 512-d codes), which computing the cells frees one by one as it moves their rows, so
 * the codes are not held twice at the peak (one buffer of a million codes was, until every row had moved).
 */
export const CHUNK_ROWS = 65_536;

/**
 * A full cell grows by this share of its rows. Room reserved but not yet used was resident like the
 * codes while every buffer came from the thread's malloc arena (zeroed or written before); a large
 * cell's codes are now a mapping of their own (code-buffer.ts) whose unwritten room is not, and
 * the share still bounds the seqs, files and live flags beside them. Measured then: doubling held
 * 1.76x the codes' bytes in a thread of 300,000 rows just before its cells were computed again
 * (fourfold growth since), and a quarter 1.10x. An eighth: one thread's 1,500,000 rows ingested in
 * adds of 512 held 781 MiB of code buffers for 732 MiB of codes instead of 860, and the thread's
 * anonymous memory fell by about 80 MiB (1,108-1,121 against 1,188-1,204; a sixteenth held less
 * room but no less memory); each row's 512 bytes are copied about eight times instead of four as
 * its cell grows, well under a microsecond, lost in the build's CPU (49.5-51.0 s against 47.0-56.4).
 */
const GROWTH = 0.125;

/** Rows of one cell: int8 codes in a buffer of their own (native scans read a buffer from its start). */
export class Cell {
  codes: Int8Array;
  seqs: Float64Array;
  files: Int32Array;
  live: Uint8Array;
  length = 0;
  dead = 0;

  constructor(
    private readonly dimension: number,
    capacity = 64,
  ) {
    this.codes = codeBuffer(capacity * dimension);
    this.seqs = new Float64Array(capacity);
    this.files = new Int32Array(capacity);
    this.live = new Uint8Array(capacity);
  }

  push(codes: Int8Array, offset: number, seq: number, file: number): number {
    if (this.length === this.seqs.length) this.grow(this.length + Math.max(64, Math.ceil(this.length * GROWTH)));
    const d = this.dimension;
    this.codes.set(codes.subarray(offset, offset + d), this.length * d);
    this.seqs[this.length] = seq;
    this.files[this.length] = file;
    this.live[this.length] = 1;
    return this.length++;
  }

  /** Room for `capacity` rows without growing (a load that knows its size allocates once). */
  reserve(capacity: number): void {
    if (capacity > this.seqs.length) this.grow(capacity);
  }

  /** The first `rows` rows' codes, from the buffer's first byte. */
  prefix(rows = this.length): Int8Array {
    return new Int8Array(this.codes.buffer, 0, rows * this.dimension);
  }

  /** Frees the rows' buffers now (their rows moved to other cells). */
  release(): void {
    freeNow(this.codes, this.seqs, this.files, this.live);
    this.codes = new Int8Array(0);
    this.seqs = new Float64Array(0);
    this.files = new Int32Array(0);
    this.live = new Uint8Array(0);
    this.length = 0;
    this.dead = 0;
  }

  /** Moves live rows down over dead ones; `moved(seq, position)` for each row that moved. */
  compact(moved: (seq: number, position: number) => void): void {
    const d = this.dimension;
    let to = 0;
    for (let from = 0; from < this.length; from++) {
      if (!this.live[from]) continue;
      if (from !== to) {
        this.codes.copyWithin(to * d, from * d, (from + 1) * d);
        this.seqs[to] = this.seqs[from];
        this.files[to] = this.files[from];
        this.live[to] = 1;
        moved(this.seqs[to], to);
      }
      to++;
    }
    this.live.fill(0, to, this.length);
    this.length = to;
    this.dead = 0;
    if (this.seqs.length > 2 * Math.max(64, to)) this.grow(Math.max(64, to));
  }

  private grow(capacity: number): void {
    const d = this.dimension;
    this.codes = resizedCodes(this.codes, capacity * d, this.length * d);
    this.seqs = resized(this.seqs, capacity, (n) => new Float64Array(n));
    this.files = resized(this.files, capacity, (n) => new Int32Array(n));
    this.live = resized(this.live, capacity, (n) => new Uint8Array(n));
  }
}

export function resized<T extends Float64Array | Int32Array | Uint8Array>(old: T, capacity: number, make: (n: number) => T): T {
  const next = make(capacity);
  next.set(old.subarray(0, Math.min(old.length, capacity)));
  freeNow(old);
  return next;
}

/**
 * Cells with their centroids (none: every row scanned, in chunks of CHUNK_ROWS), and where each seq
 * lives.
 */
export class Partition {
  readonly cells: Cell[];
  private readonly groups?: CentroidGroups;

  /**
   * @param capacities rows each cell is allocated for (else 64, or 1,024 for the first chunk).
   * @param where seq → cell * 2^32 + position; a repartition hands the old map on and overwrites
   * every entry, as every live row moves (one map of a million entries instead of two).
   */
  constructor(
    readonly dimension: number,
    readonly centroids?: Int8Array,
    capacities?: Int32Array,
    readonly where = new SeqMap(),
  ) {
    const count = centroids ? centroids.length / dimension : 1;
    const capacity = centroids ? 64 : 1024;
    this.cells = Array.from({ length: count }, (_, c) => new Cell(dimension, capacities?.[c] ?? capacity));
    this.groups = centroids ? groupsOf(centroids, dimension) : undefined;
  }

  /** Room for `rows` more rows without growing, while there are no centroids (a load that knows its size). */
  reserve(rows: number): void {
    const last = this.cells[this.cells.length - 1];
    if (!this.centroids) last.reserve(Math.min(CHUNK_ROWS, last.length + rows));
  }

  /** Adds `count` rows of codes, each to its nearest centroid's cell (without centroids, to the last chunk). */
  add(codes: Int8Array, seqs: ArrayLike<number>, files: ArrayLike<number>, threads: number): void {
    const d = this.dimension;
    const cellOf = this.nearestCells(codes, seqs.length, threads);
    for (let i = 0; i < seqs.length; i++) {
      const cell = this.centroids ? cellOf[i] : this.openChunk();
      const position = this.cells[cell].push(codes, i * d, seqs[i], files[i]);
      this.where.set(seqs[i], cell * 2 ** 32 + position);
    }
  }

  /** The chunk that takes the next row: the last one, or a new one once it holds CHUNK_ROWS. */
  private openChunk(): number {
    const last = this.cells.length - 1;
    if (this.cells[last].length < CHUNK_ROWS) return last;
    // Allocated whole: pages the rows never reach are never touched, so never resident.
    this.cells.push(new Cell(this.dimension, CHUNK_ROWS));
    return last + 1;
  }

  /** Marks the seq's row dead; its file's ordinal, or -1 when it is not here. */
  remove(seq: number): number {
    const at = this.where.get(seq);
    if (at === undefined) return -1;
    this.where.delete(seq);
    const cell = this.cells[Math.floor(at / 2 ** 32)];
    cell.live[at % 2 ** 32] = 0;
    cell.dead++;
    return cell.files[at % 2 ** 32];
  }

  compactWhereDead(): void {
    this.cells.forEach((cell, c) => {
      if (cell.dead > Math.max(64, DEAD_SHARE * cell.length)) cell.compact((seq, position) => this.where.set(seq, c * 2 ** 32 + position));
    });
  }

  /** The nearest cell of each of `count` rows of codes. */
  private nearestCells(codes: Int8Array, count: number, threads: number): Int32Array {
    if (!this.centroids || count === 0) return new Int32Array(count);
    return nearestCentroids(this.centroids, codes, count, this.dimension, threads, this.groups);
  }
}

/**
 * The nearest centroid of each of `count` rows of codes. The centroids share one scale (so their
 * codes have one length), which makes the largest inner product the nearest by cosine for any row:
 * x·c = |x| |c| cos, with |x| fixed per row and |c| the same for every centroid. The native inner
 * product kernel is about five times faster than the cosine one over many rows, and faster than
 * the squared L2 one this used before (which ranks alike: |x - c|² = |x|² + |c|² - 2 x·c). Placing every row
 * in its cell is most of a build: from GROUPED_FROM centroids on, a row is compared with the group
 * leaders and then with the centroids of its GROUPS_PER_ROW nearest groups only (about 130
 * distances instead of 1,000 at a million rows).
 */
export function nearestCentroids(
  centroids: Int8Array,
  codes: Int8Array,
  count: number,
  d: number,
  threads: number,
  groups = groupsOf(centroids, d),
): Int32Array {
  const cellOf = new Int32Array(count);
  if (count === 0) return cellOf;
  if (!groups) {
    scanInBlocks(centroids, codes, count, d, 1, threads, (i, _, key) => (cellOf[i] = key));
    return cellOf;
  }
  // Each row against the leaders, then against the centroids of its GROUPS_PER_ROW nearest groups.
  const rowsOfGroup = groups.members.map(() => [] as number[]);
  scanInBlocks(groups.leaders, codes, count, d, GROUPS_PER_ROW, threads, (i, _, g) => rowsOfGroup[g].push(i));
  const best = new Float64Array(count).fill(Infinity);
  rowsOfGroup.forEach((rows, g) => {
    // A group can be empty when two leaders are the same code.
    if (rows.length === 0 || groups.members[g].length === 0) return;
    const gathered = new Int8Array(rows.length * d);
    rows.forEach((i, n) => gathered.set(codes.subarray(i * d, (i + 1) * d), n * d));
    scanInBlocks(groups.codes[g], gathered, rows.length, d, 1, threads, (n, distance, key) => {
      const i = rows[n];
      if (distance < best[i]) {
        best[i] = distance;
        cellOf[i] = groups.members[g][key];
      }
    });
  });
  return cellOf;
}

/**
 * Rows per native scan when rows are placed: the scan passes over the whole block of rows once per
 * centroid, so a block that stays in cache is 3-4 times faster than 8,192 rows at once (measured at
 * 1,000 centroids of 512 bytes).
 */
const SCAN_BLOCK = 256;

/**
 * The `k` nearest rows of `dataset` (by inner product: distance 1 - x·c, see nearestCentroids) to each of `count` rows of `codes`, scanned in
 * blocks of SCAN_BLOCK rows; `found(row, distance, key)` for each. Native scanners read a buffer from
 * its first byte, so each block is copied to the start of one buffer.
 */
function scanInBlocks(
  dataset: Int8Array,
  codes: Int8Array,
  count: number,
  d: number,
  k: number,
  threads: number,
  found: (row: number, distance: number, key: number, rank: number) => void,
): void {
  const block = new Int8Array(Math.min(count, SCAN_BLOCK) * d);
  for (let start = 0; start < count; start += SCAN_BLOCK) {
    const rows = Math.min(SCAN_BLOCK, count - start);
    block.set(codes.subarray(start * d, (start + rows) * d));
    const queries = rows * d === block.length ? block : new Int8Array(block.buffer, 0, rows * d);
    const result = exactSearch(dataset, queries, d, k, MetricKind.IP, 1);
    for (let i = 0; i < rows * k; i++) found(start + Math.floor(i / k), result.distances[i], Number(result.keys[i]), i % k);
  }
}

/**
 * From this many centroids on, rows would be placed through groups of centroids. Off: at 1M (load
 * 4-5) grouped placement cut the build's CPU but a plain search then cost 14 CPU-ms instead of 5.6
 * (p95 104 ms): approximately placed rows make the probed cells fuller. Rows are placed exactly,
 * in cache-sized blocks (SCAN_BLOCK), until grouping places them as well as the flat scan.
 */
const GROUPED_FROM = Number.POSITIVE_INFINITY;
/** Groups whose centroids a row is compared with: its nearest cell is almost always in one of them. */
const GROUPS_PER_ROW = 3;
/** A group holds at most this many times an even share of the centroids; a centroid tries its this many nearest leaders. */
const GROUP_ROOM = 1.5;
const GROUP_CHOICES = 4;

export interface CentroidGroups {
  /** One centroid per group, that the group formed around. */
  leaders: Int8Array;
  /** Each group's centroids (as numbers), and their codes in one buffer per group. */
  members: Int32Array[];
  codes: Int8Array[];
}

/**
 * Centroids grouped around √count of them (every k-th as leader). A centroid joins the nearest of its
 * GROUP_CHOICES nearest leaders that has room (GROUP_ROOM times an even share), so that no group
 * grows to hold most centroids: in clustered collections a few leaders are the nearest of far more
 * centroids than others, and rows compared with those groups cost three times the distances of even
 * groups. Placing a row then costs about √count + GROUPS_PER_ROW · √count distances instead of count.
 */
export function groupsOf(centroids: Int8Array, d: number): CentroidGroups | undefined {
  const count = centroids.length / d;
  if (count < GROUPED_FROM) return undefined;
  const groupCount = Math.round(Math.sqrt(count));
  const leaders = new Int8Array(groupCount * d);
  for (let g = 0; g < groupCount; g++) {
    const c = Math.floor((g * count) / groupCount);
    leaders.set(centroids.subarray(c * d, (c + 1) * d), g * d);
  }
  const room = Math.ceil((GROUP_ROOM * count) / groupCount);
  const lists = Array.from({ length: groupCount }, () => [] as number[]);
  const choices = Math.min(GROUP_CHOICES, groupCount);
  let placed = -1;
  let firstChoice = 0;
  scanInBlocks(leaders, centroids, count, d, choices, 1, (c, _, g, rank) => {
    if (placed === c) return;
    if (rank === 0) firstChoice = g;
    // The nearest leader with room; the nearest of all when none of the choices has room.
    if (lists[g].length < room) lists[g].push(c);
    else if (rank === choices - 1) lists[firstChoice].push(c);
    else return;
    placed = c;
  });
  const members = lists.map((list) => Int32Array.from(list));
  const codes = members.map((list) => {
    const buffer = new Int8Array(list.length * d);
    list.forEach((c, n) => buffer.set(centroids.subarray(c * d, (c + 1) * d), n * d));
    return buffer;
  });
  return { leaders, members, codes };
}

/** Codes of unit directions (rows of `units`, normalised here) at ONE scale: the largest component of all becomes ±127. */
export function quantiseAtOneScale(units: Float32Array, into: Int8Array, d: number): void {
  const rows = units.length / d;
  let max = 0;
  for (let r = 0; r < rows; r++) {
    let squares = 0;
    for (let j = 0; j < d; j++) squares += units[r * d + j] ** 2;
    const inverse = squares === 0 ? 0 : 1 / Math.sqrt(squares);
    for (let j = 0; j < d; j++) {
      const x = (units[r * d + j] *= inverse);
      if (Math.abs(x) > max) max = Math.abs(x);
    }
  }
  const scale = max === 0 ? 0 : 127 / max;
  for (let i = 0; i < units.length; i++) into[i] = Math.round(units[i] * scale);
}

/**
 * One round of spherical k-means over int8 codes: each centroid becomes the mean direction of its
 * rows, and the centroids are coded at one scale.
 */
export function trainingRound(sample: Int8Array, centroids: Int8Array, d: number, threads: number): void {
  const rows = sample.length / d;
  const count = centroids.length / d;
  const cellOf = nearestCentroids(centroids, sample, rows, d, threads);
  const sums = new Float32Array(count * d);
  const members = new Int32Array(count);
  for (let i = 0; i < rows; i++) {
    const c = cellOf[i];
    members[c]++;
    let squares = 0;
    for (let j = 0; j < d; j++) squares += sample[i * d + j] ** 2;
    const scale = squares === 0 ? 0 : 1 / Math.sqrt(squares);
    for (let j = 0; j < d; j++) sums[c * d + j] += sample[i * d + j] * scale;
  }
  for (let c = 0; c < count; c++) {
    if (members[c] > 0) continue;
    // An empty cell restarts from a sample row of its own (spread by its number).
    const row = (c * 7919) % rows;
    for (let j = 0; j < d; j++) sums[c * d + j] = sample[row * d + j];
  }
  quantiseAtOneScale(sums, centroids, d);
}
