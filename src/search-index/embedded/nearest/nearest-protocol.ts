/** Messages between the vector index (main thread) and its search threads (nearest.worker.ts). */

/** What each search thread is started with: how many threads share the rows. */
export interface NearestWorkerData {
  shards: number;
  /** Which of the threads this one is: it holds the rows whose shardOf is this. */
  shard: number;
}

/**
 * The search thread that holds the row of `seq`: rows go to threads by their vector pair (seq / 2,
 * see vector-pairs.ts), so both vectors of a stored pair row go to one thread. Shared by seq alone
 * (seq % shards), each of two threads read every pair row of a collection to keep half of it: a
 * 4 KiB record and its overflow page read twice, in both threads. By pair, a thread's read of its
 * share cost 4.3-5.1 µs of CPU a row instead of 6.3-7.8 (120,000 rows, two threads, four rounds).
 * SHARD_OF_UNIT_SQL is the same in SQL.
 */
export function shardOf(seq: number, shards: number): number {
  return Math.floor(seq / 2) % shards;
}

/** shardOf in SQL, for a unit row `u` and the bound number of shards: `${SHARD_OF_UNIT_SQL} = ?` (the shard). */
export const SHARD_OF_UNIT_SQL = '(u.seq >> 1) % ?';

/**
 * Where a search thread reads its share of a collection itself: the store's file, on a read-only
 * connection of its own, the rows with `after < seq <= upTo`.
 */
export interface LoadSource {
  file: string;
  after: number;
  upTo: number;
}

export type NearestRequest =
  | {
      type: 'add';
      collectionId: string;
      dimension: number;
      seqs: Float64Array;
      fileIds: string[];
      /** `seqs.length` rows of `dimension` floats. */
      vectors: Float32Array;
    }
  | { type: 'remove'; collectionId: string; seqs: Float64Array }
  /**
   * A load of the collection from the store begins (`rows` rows to come) or ends: its cells are
   * computed once, at the end. With a `source` (and an `id`), the thread reads its rows itself,
   * in steps between messages, and answers `loaded` when it holds them; without, they come in `add`s.
   */
  | { type: 'load'; collectionId: string; dimension: number; rows: number; id?: number; source?: LoadSource }
  | { type: 'loaded'; collectionId: string }
  /** Rows committed by other processes: the thread reads its share of them from the store at once, before its next message. */
  | { type: 'read'; collectionId: string; dimension: number; source: LoadSource }
  /** Answered once every message before it is handled: a loader waits on it to keep few batches queued. */
  | { type: 'sync'; id: number }
  | { type: 'drop'; collectionId: string }
  | {
      type: 'search';
      id: number;
      collectionId: string;
      query: Float32Array;
      k: number;
      /** Only rows of these files. */
      fileIds?: string[];
    }
  | { type: 'stats'; id: number }
  /** The thread ends itself between two messages or build steps (see NearestThread.close). */
  | { type: 'close' };

export interface NearestStats {
  collections: {
    collectionId: string;
    size: number;
    /** Cells of the inverted file (1: scanned exactly). */
    cells: number;
    building: boolean;
  }[];
}

export type NearestResponse =
  | { type: 'hits'; id: number; seqs: Float64Array; distances: Float32Array }
  | { type: 'stats'; id: number; stats: NearestStats }
  | { type: 'synced'; id: number }
  | { type: 'loaded'; id: number }
  | { type: 'error'; id: number; message: string };
