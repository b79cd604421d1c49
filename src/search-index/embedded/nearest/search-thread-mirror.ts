import type Database from 'better-sqlite3';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ProcessNotices } from '../../../common/process-notices';
import type { IndexUnit } from '../../../domain/vector-index.port';
import { floatsOf, packRows, type VectorRow } from '../float-blob';
import type { UnitStatements } from '../unit-statements';
import { NearestThreads } from './nearest-threads';

/**
 * Rows per read (and message) when vectors other processes committed are taken in (or an in-memory
 * store's collection is loaded; a file's is read by the search threads themselves): each read holds the event loop, about 7 µs a row (1 MB
 * of floats in 512 rows: a few milliseconds, where 4,096 rows held it 40-80 ms on a loaded machine,
 * every take-in while a worker process ingested, and /health waited behind them).
 */
const LOAD_BATCH = 512;
/**
 * Batches a load keeps posted but not yet handled by the search thread (32,768 rows): reading the
 * store is faster than coding, and unbounded the floats of a million rows (2 GB at 512 dimensions)
 * would queue.
 */
const LOAD_AHEAD = 64;

/** A worker process tells the others of its commits to a collection at most this often. */
const ANNOUNCE_EVERY_MS = 100;

/**
 * When a process that answers searches takes in what other processes committed to a collection:
 * once no notice of it has come for `quietMs` (its ingestion went quiet), or as soon as `atMostRows`
 * rows (counted by seq, which all collections share) wait, in big batches. Taken in on every 100 ms
 * notice, the search threads coded the worker's vectors while it ingested, a quarter of the
 * service's CPU a passage on the cores ingestion needs. A search meanwhile still takes in every
 * committed row before it answers (see SqliteVectorIndex.searchVector), so the rows bound how long
 * it waits for that (100,000 rows of 512 dimensions: about a second of the search threads' CPU);
 * a bound in time instead took them in sooner the slower the machine ingested.
 */
export interface TakeInTiming {
  quietMs: number;
  atMostRows: number;
}
export const TAKE_IN_TIMING: TakeInTiming = { quietMs: 1_000, atMostRows: 100_000 };

/** The part of the processes' channel (common/process-notices.ts) the index speaks on. */
export type VectorNotices = Pick<ProcessNotices, 'announceVectors' | 'onVectors'>;

/** What the mirror reads of the store: its connection, statements, and each collection's live rows. */
export interface MirroredStore {
  db: Database.Database;
  prepared(): UnitStatements;
  collectionDimension(collectionId: string): number | undefined;
  /** Units of the collection with this seq or lower are deleted (-1: none). */
  deletedUpTo(collectionId: string): number;
}

/**
 * The embedded index's side of its search threads (sqlite-vector-index.adapter.ts holds the store's
 * side): which collections the current threads hold and up to which seq, loading them on first use,
 * posting what the store committed (never before the commit), and telling other processes of
 * commits or taking in theirs.
 */
export class SearchThreadMirror {
  /** Collections loaded (or loading) into the current search thread. */
  private readonly loaded = new Map<string, Promise<void>>();
  private loadedGeneration = -1;
  /**
   * Per loaded collection, the seq up to which the search thread holds every committed row. Other
   * processes on the store (worker processes of `npm start`, a split layout) commit rows this one
   * never posts: a search first takes in the rows committed above it.
   */
  private readonly heldUpTo = new Map<string, number>();
  private closing = false;
  private readonly stopListening: () => void;
  /**
   * Collections other processes committed to, waiting for their ingestion to go quiet: the seq the
   * wait counts from (what the threads hold, or the highest at the first notice) and the timer.
   */
  private readonly deferred = new Map<string, { from: number; timer: NodeJS.Timeout }>();
  /** Collections whose vectors other processes committed, to take in; and the take-in under way. */
  private readonly toTakeIn = new Set<string>();
  private takingIn?: Promise<void>;
  /** Collections whose commits here are told to the other processes at the end of the current window. */
  private readonly toAnnounce = new Set<string>();
  private announceTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: MirroredStore,
    private readonly nearest: NearestThreads,
    private readonly answersSearches: boolean,
    private readonly notices: VectorNotices,
    private readonly timing: TakeInTiming = TAKE_IN_TIMING,
  ) {
    this.stopListening = this.answersSearches ? this.notices.onVectors((collectionId) => this.noticed(collectionId)) : () => undefined;
  }

  /** Take-ins stop after their current collection; resolves when the one under way has. */
  async close(): Promise<void> {
    this.closing = true;
    this.stopListening();
    clearTimeout(this.announceTimer);
    for (const { timer } of this.deferred.values()) clearTimeout(timer);
    this.deferred.clear();
    await this.takingIn;
  }

  /** After the commit of `units` (as `blobs`, given `seqs`): posts them to the search thread, or loads or announces their collections. */
  committed(units: IndexUnit[], blobs: Buffer[], seqs: number[], dimensions: Map<string, number>): void {
    for (const collectionId of dimensions.keys()) {
      if (!this.isLoaded(collectionId)) {
        // In a worker process, a collection it has not searched stays out of its search thread: one
        // that only ingests would otherwise code and place every vector a second time, on cores
        // the ingestion needs. Its first search loads what the store then holds.
        // Loading reads what was just committed; nothing to post.
        if (this.answersSearches) void this.ensureLoaded(collectionId).catch(() => undefined);
        else this.announce(collectionId);
        continue;
      }
      const mine = units.map((unit, i) => i).filter((i) => units[i].collectionId === collectionId);
      const dimension = dimensions.get(collectionId)!;
      const vectors = new Float32Array(mine.length * dimension);
      mine.forEach((i, n) => vectors.set(floatsOf(blobs[i]), n * dimension));
      const batchSeqs = Float64Array.from(mine, (i) => seqs[i]);
      // Rows right above what the thread holds leave no gap another process could have filled.
      if (batchSeqs[0] === (this.heldUpTo.get(collectionId) ?? -1) + 1) this.heldUpTo.set(collectionId, batchSeqs[batchSeqs.length - 1]);
      this.nearest.post({ type: 'add', collectionId, dimension, seqs: batchSeqs, fileIds: mine.map((i) => units[i].fileId), vectors }, [
        vectors.buffer,
        batchSeqs.buffer,
      ]);
    }
  }

  /** The collection was deleted: the search thread drops it. */
  drop(collectionId: string): void {
    clearTimeout(this.deferred.get(collectionId)?.timer);
    this.deferred.delete(collectionId);
    if (this.isLoaded(collectionId)) this.nearest.post({ type: 'drop', collectionId });
    this.loaded.delete(collectionId);
    this.heldUpTo.delete(collectionId);
  }

  /**
   * In a process that does not answer searches (a worker that only ingests): tells the others that
   * a collection's vectors were committed, at most once per ANNOUNCE_EVERY_MS per collection (the
   * window's last commit included: the take-in reads everything above what it holds).
   */
  private announce(collectionId: string): void {
    this.toAnnounce.add(collectionId);
    this.announceTimer ??= setTimeout(() => {
      this.announceTimer = undefined;
      for (const id of this.toAnnounce) this.notices.announceVectors(id);
      this.toAnnounce.clear();
    }, ANNOUNCE_EVERY_MS);
  }

  /**
   * Another process committed vectors of `collectionId`: their take-in waits until the collection's
   * ingestion goes quiet, or until TakeInTiming.atMostRows rows wait.
   */
  private noticed(collectionId: string): void {
    if (this.closing) return;
    const waiting = this.deferred.get(collectionId);
    clearTimeout(waiting?.timer);
    let highest = -1;
    try {
      highest = (this.store.prepared().maxSeq.get(collectionId) as number | null) ?? -1;
    } catch {
      // Not yet initialised (or closed): the quiet timer alone decides.
    }
    const from = this.heldUpTo.get(collectionId) ?? waiting?.from ?? highest;
    const takeIn = () => {
      this.deferred.delete(collectionId);
      this.takeIn(collectionId);
    };
    if (highest - from >= this.timing.atMostRows) return takeIn();
    const timer = setTimeout(takeIn, this.timing.quietMs);
    // A take-in waiting never keeps the process alive.
    timer.unref();
    this.deferred.set(collectionId, { from, timer });
  }

  /**
   * In a process that answers searches: another process committed vectors of `collectionId` and its
   * ingestion went quiet (see noticed), so it is loaded (or what was committed above what the thread
   * holds is read), as a search would, but now: a search after the worker process ingested does not
   * wait for the load. One take-in at a time; notices arriving meanwhile are taken in after it.
   */
  private takeIn(collectionId: string): void {
    if (this.closing) return;
    this.toTakeIn.add(collectionId);
    if (this.takingIn) return;
    this.takingIn = (async () => {
      while (this.toTakeIn.size > 0 && !this.closing) {
        const [next] = this.toTakeIn;
        this.toTakeIn.delete(next);
        await this.ensureLoaded(next)
          .then(() => this.catchUp(next))
          .catch(() => undefined);
      }
      this.takingIn = undefined;
    })();
  }

  private isLoaded(collectionId: string): boolean {
    if (this.loadedGeneration !== this.nearest.generation) return false;
    return this.loaded.has(collectionId);
  }

  /**
   * Loads the collection's vectors into the search threads once per thread: each thread reads its
   * share in seq order on a connection of its own (an in-memory store's rows are read here, in
   * batches, the event loop let through between them). Writes committed meanwhile are either read
   * by a later batch or posted after the load; the thread keeps one row per seq either way.
   */
  ensureLoaded(collectionId: string): Promise<void> {
    if (this.loadedGeneration !== this.nearest.generation) {
      this.loaded.clear();
      this.heldUpTo.clear();
      this.loadedGeneration = this.nearest.generation;
    }
    let loading = this.loaded.get(collectionId);
    if (!loading) {
      loading = this.load(collectionId);
      this.loaded.set(collectionId, loading);
      loading.catch(() => {
        if (this.loaded.get(collectionId) === loading) this.loaded.delete(collectionId);
      });
    }
    return loading;
  }

  private async load(collectionId: string): Promise<void> {
    const dimension = this.store.collectionDimension(collectionId);
    if (dimension === undefined) return;
    const after = this.store.deletedUpTo(collectionId);
    const rows = this.store.prepared().count.get(collectionId, after) as number;
    if (!this.store.db.memory) {
      // Each search thread reads its share on a connection of its own: the event loop only posts
      // the load, and every core reads and codes. Rows committed above `upTo` come as any later
      // commit does: posted by this process's upserts, or taken in by catchUp.
      const upTo = (this.store.prepared().maxSeq.get(collectionId) as number | null) ?? after;
      if (this.loadedGeneration === this.nearest.generation) this.heldUpTo.set(collectionId, upTo);
      await this.nearest.load(collectionId, dimension, rows, { file: this.store.db.name, after, upTo });
      return;
    }
    // An in-memory database no other connection can open: its rows are read here and posted.
    this.nearest.post({ type: 'load', collectionId, dimension, rows });
    try {
      await this.postRowsAbove(collectionId, this.store.deletedUpTo(collectionId));
    } finally {
      if (this.loadedGeneration === this.nearest.generation) this.nearest.post({ type: 'loaded', collectionId });
    }
  }

  /**
   * Rows another process committed since the thread took in the collection: those above the seq it
   * holds every row up to, read by the search threads themselves (an in-memory store's are read
   * here and posted as a load's batches are); a row taken in twice is replaced.
   */
  async catchUp(collectionId: string): Promise<void> {
    const held = this.heldUpTo.get(collectionId);
    if (held === undefined) return;
    const highest = this.store.prepared().maxSeq.get(collectionId) as number | null;
    if (highest === null || highest <= held) return;
    const dimension = this.store.collectionDimension(collectionId);
    if (this.store.db.memory || dimension === undefined) return this.postRowsAbove(collectionId, held);
    // Each search thread reads its share before its next message (a search posted after it sees the rows).
    this.heldUpTo.set(collectionId, highest);
    this.nearest.post({ type: 'read', collectionId, dimension, source: { file: this.store.db.name, after: held, upTo: highest } });
  }

  /** Posts the collection's rows above `after` to the search thread in batches, noting how far it holds them. */
  private async postRowsAbove(collectionId: string, after: number): Promise<void> {
    const select = this.store.prepared().vectorBatch;
    const generation = this.nearest.generation;
    const held = (upTo: number) => {
      if (generation === this.nearest.generation) this.heldUpTo.set(collectionId, Math.max(upTo, this.heldUpTo.get(collectionId) ?? -1));
    };
    held(after);
    for (let batch = 1; ; batch++) {
      const rows = select.all(collectionId, after, LOAD_BATCH) as VectorRow[];
      if (rows.length === 0) return;
      const dimension = rows[0].vector.byteLength / 4;
      const { seqs, fileIds, vectors } = packRows(rows, dimension);
      this.nearest.post({ type: 'add', collectionId, dimension, seqs, fileIds, vectors }, [vectors.buffer, seqs.buffer]);
      after = rows[rows.length - 1].seq;
      held(after);
      if (rows.length < LOAD_BATCH) return;
      if (batch % LOAD_AHEAD === 0) await this.nearest.sync();
      else await yieldToEventLoop();
    }
  }

  postRemove(collectionId: string | null, seqs: number[]): void {
    if (collectionId === null || !this.isLoaded(collectionId) || seqs.length === 0) return;
    const removed = Float64Array.from(seqs);
    this.nearest.post({ type: 'remove', collectionId, seqs: removed }, [removed.buffer]);
  }
}
