// Scanning one cell's codes, and the k nearest hits kept across cells.
import { exactSearch, MetricKind } from 'usearch';
import type { Cell } from './cells';

/** A row found by its codes. */
export interface CodeHit {
  seq: number;
  /** Cosine distance between the int8 codes (within about 0.003 of the float distance). */
  distance: number;
}

/**
 * The `count` nearest live rows of one cell (that pass `keep`), offered to `hits`; the native scan
 * is asked for enough more to cover the cell's dead rows.
 */
export function scanCell(cell: Cell, q: Int8Array, count: number, hits: NearestHits, keep?: (position: number) => boolean): void {
  const wanted = Math.min(cell.length, count + cell.dead);
  if (wanted === 0) return;
  const found = exactSearch(cell.prefix(), q, q.length, wanted, MetricKind.Cos, 1);
  for (let i = 0; i < found.keys.length; i++) {
    const p = Number(found.keys[i]);
    // Nearest first: once one cannot be among the k nearest, neither can the rest.
    if (cell.live[p] && (!keep || keep(p)) && !hits.offer(cell.seqs[p], found.distances[i])) return;
  }
}

/**
 * The k nearest hits offered, nearest first, kept as they come instead of sorting every cell's
 * hits together (k from each probed cell per search). Of equal distances, the first offered stays first.
 */
export class NearestHits {
  private readonly seqs: number[] = [];
  private readonly distances: number[] = [];

  constructor(private readonly k: number) {}

  /** Whether the hit is (for now) among the k nearest. */
  offer(seq: number, distance: number): boolean {
    const n = this.distances.length;
    if (n === this.k && distance >= this.distances[n - 1]) return false;
    let at = n;
    while (at > 0 && this.distances[at - 1] > distance) at--;
    this.seqs.splice(at, 0, seq);
    this.distances.splice(at, 0, distance);
    if (n === this.k) {
      this.seqs.pop();
      this.distances.pop();
    }
    return true;
  }

  list(): CodeHit[] {
    return this.seqs.map((seq, i) => ({ seq, distance: this.distances[i] }));
  }
}
