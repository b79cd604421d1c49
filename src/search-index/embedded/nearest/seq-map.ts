import { freeNow } from './free-now';

/** Slots stay at most this full; a fuller table doubles. */
const MAX_LOAD = 0.8;
const EMPTY = -1;

/**
 * seq → where its row lives (cell * 2^32 + position), for every row of a search thread's
 * collection, in two typed arrays (open addressing, linear probing): 16 bytes a slot, about 21
 * a row, where a Map held 56 (79 MiB of V8 heap at 1,500,000 rows, each value a boxed number
 * past 2^31). Seqs are non-negative integers (SQLite rowids).
 */
export class SeqMap {
  private keys: Float64Array;
  private values: Float64Array;
  private mask: number;
  private shift: number;
  size = 0;

  constructor(capacity = 1024) {
    const slots = 2 ** Math.ceil(Math.log2(Math.max(16, capacity / MAX_LOAD)));
    this.keys = new Float64Array(slots).fill(EMPTY);
    this.values = new Float64Array(slots);
    this.mask = slots - 1;
    this.shift = 32 - Math.log2(slots);
  }

  get(seq: number): number | undefined {
    const at = this.find(seq);
    return this.keys[at] === EMPTY ? undefined : this.values[at];
  }

  set(seq: number, value: number): void {
    let at = this.find(seq);
    if (this.keys[at] === EMPTY) {
      if (this.size + 1 > MAX_LOAD * this.keys.length) {
        this.rehash(2 * this.keys.length);
        at = this.find(seq);
      }
      this.keys[at] = seq;
      this.size++;
    }
    this.values[at] = value;
  }

  delete(seq: number): boolean {
    let at = this.find(seq);
    if (this.keys[at] === EMPTY) return false;
    // Backward-shift deletion: the entries after it in its run move up where their probe allows.
    const { keys, values, mask } = this;
    for (let next = (at + 1) & mask; keys[next] !== EMPTY; next = (next + 1) & mask) {
      // The entry at `next` moves up to `at` when `at` lies on its probe path (its home not in (at, next], cyclically).
      if (((next - this.home(keys[next])) & mask) >= ((next - at) & mask)) {
        keys[at] = keys[next];
        values[at] = values[next];
        at = next;
      }
    }
    keys[at] = EMPTY;
    this.size--;
    return true;
  }

  /** The slot holding `seq`, or the empty slot where it would go. */
  private find(seq: number): number {
    const { keys, mask } = this;
    let at = this.home(seq);
    while (keys[at] !== EMPTY && keys[at] !== seq) at = (at + 1) & mask;
    return at;
  }

  private home(seq: number): number {
    // Both halves of the seq, mixed (a search thread's seqs share their residue mod the threads).
    // Fibonacci hashing: the product's high bits (its low bits repeat the seq's).
    return Math.imul((seq >>> 0) ^ Math.floor(seq / 2 ** 32), 0x9e3779b1) >>> this.shift;
  }

  private rehash(slots: number): void {
    const { keys, values } = this;
    this.keys = new Float64Array(slots).fill(EMPTY);
    this.values = new Float64Array(slots);
    this.mask = slots - 1;
    this.shift = 32 - Math.log2(slots);
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] === EMPTY) continue;
      const at = this.find(keys[i]);
      this.keys[at] = keys[i];
      this.values[at] = values[i];
    }
    freeNow(keys, values);
  }
}
