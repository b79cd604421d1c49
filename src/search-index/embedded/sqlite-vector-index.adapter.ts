// Not split, though over 500 lines: one adapter of one port (VectorIndex) over the store's unit
// tables, whose every method keeps the store (the truth) and this process's search thread in step:
// upserts and deletes post to the thread only after their commit, and searches first take in what
// other processes committed (the seq high-water mark). Split, that ordering would span files. Where
// it splits next: the thread's side (isLoaded, ensureLoaded, load, catchUp, postRowsAbove,
// postRemove, announce, takeIn, about 150 lines) into a `SearchThreadMirror` class beside
// nearest-threads.ts, and the background purge of deleted collections (purgeLater,
// deleteInBatches) into its own file.
import type Database from 'better-sqlite3';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { AppError, ErrorCode } from '../../common/app-error';
import { l2Normalize } from '../../embeddings/vectors';
import { GroupCommit, groupCommitOf } from '../../storage/embedded/group-commit';
import {
  assertSearchK,
  assertUnitFilter,
  fileIdsOf,
  assertUsableVector,
  assertVectorPassages,
  dimensionsByCollection,
  embeddingMismatch,
  IndexUnit,
  TextHit,
  UnitFilter,
  VectorHit,
  VectorIndex,
} from '../../domain/vector-index.port';
import { floatsOf } from './float-blob';
import { toFts5Query } from './fts5-query';
import { NearestThreads } from './nearest/nearest-threads';
import { TextReader } from './text/text-reader';
import { ProcessNotices, processNotices } from '../../common/process-notices';
import { SEARCH_TEXT_IN_FILES_SQL, SEARCH_TEXT_SQL, TextSearchRequest, TextSearchRow } from './text/text-search-sql';

/**
 * Units deleted per transaction. A vec0 delete costs tens of microseconds, so a batch holds the
 * event loop for a few tens of milliseconds and a 100,000-unit collection still goes in seconds.
 */
export const DELETE_BATCH = 500;

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

/** The part of the processes' channel (common/process-notices.ts) the index speaks on. */
export type VectorNotices = Pick<ProcessNotices, 'announceVectors' | 'onVectors'>;

export interface SqliteVectorIndexOptions {
  /** The search threads; one set per index. */
  nearest?: NearestThreads;
  /**
   * The text reader thread, on its own connection to the same file; null runs BM25 on the database
   * itself (an in-memory database, which no other connection can open).
   */
  reader?: TextReader | null;
  /**
   * Whether this process answers searches (APP_ROLE all or api; default). It keeps the collections
   * ingested into, here or in other processes (told by their notices), loaded in its search
   * threads, so the first search after ingestion does not pay the load. A worker process that only
   * ingests leaves them out (see upsert) and tells the others of its commits instead.
   */
  answersSearches?: boolean;
  /** The channel to the service's other processes (default: this process's). */
  notices?: VectorNotices;
}
/**
 * Code-ranked hits per wanted hit that are re-ranked by their float vectors: the int8 codes rank
 * within about 0.003 of the float distance, so a small margin settles the final order exactly.
 */
const RERANK_MARGIN = 16;

interface UnitRow {
  seq: number;
  dimension: number;
}

interface VectorRow {
  seq: number;
  fileId: string;
  vector: Buffer;
}

/**
 * The embedded index: vectors and BM25 in the service's SQLite file (the source of truth), searched
 * by search threads that hold int8 codes of every vector (each thread a share of every collection's
 * rows), grouped in cells per large collection.
 *
 * `search_units` maps each unit to its collection, file, passage and dimension; its integer `seq`
 * keys the unit's float vector in `search_unit_vectors` (stored L2-normalised) and its row in
 * `search_units_fts`. The FTS table is contentless: the text already lives in the passage store,
 * and BM25 needs only the index.
 *
 * The search thread (nearest/) is derived state: a collection is loaded into it from the store on
 * first use after start, each write is committed to the store first and then posted to the thread,
 * and a thread that dies is started again and reloaded. A crash at any point therefore leaves
 * nothing to repair: the next start rebuilds from what the store committed. The thread ranks by
 * int8 codes (exactly below EXACT_SCAN_BELOW units, in the nearest cells above); the hits it returns
 * are re-ranked here by their float vectors, so distances are exact.
 *
 * better-sqlite3 is synchronous: each call is one short statement or one transaction, and bulk
 * reads and deletes go in batches with the event loop let through between them. BM25 searches,
 * whose cost grows with the collection (a common word matches most units), run in the text reader
 * thread (text/) on a read-only connection of its own: in WAL mode it sees every committed write.
 */
export class SqliteVectorIndex extends VectorIndex {
  private statements?: ReturnType<SqliteVectorIndex['prepareUnitStatements']>;
  /** Collections loaded (or loading) into the current search thread. */
  private readonly loaded = new Map<string, Promise<void>>();
  private loadedGeneration = -1;
  /**
   * Per loaded collection, the seq up to which the search thread holds every committed row. Other
   * processes on the store (worker processes of `npm start`, a split layout) commit rows this one
   * never posts: a search first takes in the rows committed above it.
   */
  private readonly heldUpTo = new Map<string, number>();
  /** Background purges of deleted collections, one after another. */
  private purges = Promise.resolve();
  private closing = false;
  /**
   * Upserts and deletes commit through the connection's group commit: with worker processes on the
   * same file, a write lock held by another process is asked for again from the event loop instead
   * of sleeping the process in SQLite's busy wait, and the writes of one turn share one commit.
   */
  private readonly writes: GroupCommit;

  private readonly nearest: NearestThreads;
  private readonly reader: TextReader | null;
  private readonly answersSearches: boolean;
  private readonly notices: VectorNotices;
  private readonly stopListening: () => void;
  /** Collections whose vectors other processes committed, to take in; and the take-in under way. */
  private readonly toTakeIn = new Set<string>();
  private takingIn?: Promise<void>;
  /** Collections whose commits here are told to the other processes at the end of the current window. */
  private readonly toAnnounce = new Set<string>();
  private announceTimer?: NodeJS.Timeout;

  /** @param db an open database; the caller owns it and closes it. */
  constructor(
    private readonly db: Database.Database,
    options: SqliteVectorIndexOptions = {},
  ) {
    super();
    this.writes = groupCommitOf(db);
    this.nearest = options.nearest ?? new NearestThreads();
    this.reader = options.reader !== undefined ? options.reader : db.memory ? null : new TextReader(db.name);
    this.answersSearches = options.answersSearches ?? true;
    this.notices = options.notices ?? processNotices;
    this.stopListening = this.answersSearches ? this.notices.onVectors((collectionId) => this.takeIn(collectionId)) : () => undefined;
  }

  async init(): Promise<void> {
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS search_units (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        collection_id TEXT NOT NULL,
        file_id TEXT NOT NULL,
        passage_id TEXT NOT NULL,
        dimension INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS search_units_collection_file ON search_units (collection_id, file_id);
      CREATE INDEX IF NOT EXISTS search_units_collection_seq ON search_units (collection_id, seq);
      CREATE INDEX IF NOT EXISTS search_units_passage ON search_units (passage_id);
      CREATE VIRTUAL TABLE IF NOT EXISTS search_units_fts USING fts5(
        text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2'
      );
      CREATE TABLE IF NOT EXISTS search_unit_vectors (seq INTEGER PRIMARY KEY, vector BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS search_deleted_collections (collection_id TEXT PRIMARY KEY, up_to_seq INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS search_seq_high (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
    `);
    this.moveVec0Tables();
    this.statements = this.prepareUnitStatements();
    // Purges an earlier process did not finish.
    for (const collectionId of this.prepared().buried.all() as string[]) this.purgeLater(collectionId);
  }

  /**
   * Earlier versions kept vectors in sqlite-vec tables (`search_vectors_<dim>`, scanned exactly);
   * their rows move into `search_unit_vectors` once, in one transaction per table.
   */
  private moveVec0Tables(): void {
    const tables = this.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'search_vectors_[0-9]*' AND sql LIKE '%vec0%'`)
      .pluck()
      .all() as string[];
    for (const table of tables) {
      this.db.transaction(() => {
        this.db.exec(`INSERT OR IGNORE INTO search_unit_vectors (seq, vector) SELECT rowid, embedding FROM ${table}`);
        this.db.exec(`DROP TABLE ${table}`);
      })();
    }
  }

  async upsert(units: IndexUnit[]): Promise<void> {
    if (units.length === 0) return;
    const dimensions = dimensionsByCollection(units);
    const blobs = units.map((unit) => normalisedBlob(unit.vector));
    const s = this.prepared();

    const removed: { collectionId: string; seq: number }[] = [];
    const ids = JSON.stringify(units.map((unit) => unit.id));
    const seqs = await this.writes.run(() => {
      // Replaced units go first, so they do not count as the collection's existing vectors. One
      // read for the batch: a lookup per unit was a statement per unit for what is nearly always none.
      for (const existing of s.findByIds.all(ids) as (UnitRow & { collectionId: string })[]) {
        this.deleteRows([existing]);
        removed.push({ collectionId: existing.collectionId, seq: existing.seq });
      }
      for (const [collectionId, dimension] of dimensions) {
        const existing = this.collectionDimension(collectionId);
        if (existing !== undefined && existing !== dimension) throw embeddingMismatch(collectionId, existing, dimension);
      }
      // Seqs only grow, never handed out twice: left to itself SQLite gives a deleted top row's seq to
      // the next unit, which another process's search thread may still hold under the old vector.
      let seq = s.highestSeq.get() as number;
      const given = units.map((unit, i) => {
        seq += 1;
        s.insertUnit.run(seq, unit.id, unit.collectionId, unit.fileId, unit.passageId, unit.vector.length);
        s.insertVector.run(seq, blobs[i]);
        s.insertText.run(seq, unit.text);
        return seq;
      });
      s.setHighestSeq.run(seq);
      return given;
    });

    // Committed: now the search thread, which only ever holds what the store has.
    for (const { collectionId, seq } of removed) this.postRemove(collectionId, [seq]);
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

  async searchVector(collectionId: string, vector: Float32Array, k: number, filter?: UnitFilter): Promise<VectorHit[]> {
    assertSearchK(k);
    assertUsableVector(vector, 'Query vector');
    assertUnitFilter(filter);
    const fileIds = filter && fileIdsOf(filter);
    const dimension = this.collectionDimension(collectionId);
    if (dimension === undefined) return [];
    if (dimension !== vector.length) throw embeddingMismatch(collectionId, dimension, vector.length);
    if (fileIds?.length === 0) return [];
    await this.ensureLoaded(collectionId);
    await this.catchUp(collectionId);
    const query = l2Normalize(vector);
    const { seqs } = await this.nearest.search(collectionId, query, k + Math.min(k, RERANK_MARGIN), fileIds ? [...fileIds] : undefined);
    if (seqs.length === 0) return [];
    // Units deleted since the thread answered, here or by another process, are gone from this read.
    const rows = this.prepared().unitsBySeq.all(JSON.stringify(Array.from(seqs))) as {
      seq: number;
      unitId: string;
      passageId: string;
      fileId: string;
      vector: Buffer;
    }[];
    if (rows.length < seqs.length) {
      // Rows another process deleted: the thread lets them go, so they no longer take places in later answers.
      const present = new Set(rows.map((row) => row.seq));
      this.postRemove(
        collectionId,
        Array.from(seqs).filter((seq) => !present.has(seq)),
      );
    }
    const hits = rows.map(({ unitId, passageId, fileId, vector: blob }) => ({
      unitId,
      passageId,
      fileId,
      distance: cosineDistanceToUnit(query, blob),
    }));
    hits.sort((a, b) => a.distance - b.distance || (a.unitId < b.unitId ? -1 : a.unitId > b.unitId ? 1 : 0));
    return hits.slice(0, k);
  }

  async searchText(collectionId: string, text: string, k: number, filter?: UnitFilter): Promise<TextHit[]> {
    assertSearchK(k);
    assertUnitFilter(filter);
    const fileIds = filter && fileIdsOf(filter);
    const query = toFts5Query(text);
    if (query === null || fileIds?.length === 0) return [];
    const request: TextSearchRequest = {
      query,
      collectionId,
      after: this.deletedUpTo(collectionId),
      k,
      ...(fileIds ? { fileIds: JSON.stringify(fileIds) } : {}),
    };
    const rows = this.reader ? await this.reader.search(request) : this.searchTextHere(request);
    // FTS5's bm25() is negated so that ascending order is best first; the port's score is not.
    return rows.map(({ unitId, passageId, fileId, bm25 }) => ({ unitId, passageId, fileId, score: -bm25 }));
  }

  /** One indexed read of the passages' rows (search_units_passage): a page's worth, whatever the collection's size. */
  async passageVectors(collectionId: string, passageIds: readonly string[]): Promise<Map<string, Float32Array[]>> {
    assertVectorPassages(passageIds);
    const vectors = new Map<string, Float32Array[]>();
    if (passageIds.length === 0) return vectors;
    const rows = this.prepared().vectorsOfPassages.all(
      JSON.stringify([...new Set(passageIds)]),
      collectionId,
      this.deletedUpTo(collectionId),
    ) as { passageId: string; vector: Buffer }[];
    for (const { passageId, vector } of rows) {
      const list = vectors.get(passageId) ?? [];
      // A copy: the row's buffer may be a view into memory SQLite reuses.
      list.push(Float32Array.from(floatsOf(vector)));
      vectors.set(passageId, list);
    }
    return vectors;
  }

  /** BM25 on the main connection: for an in-memory database only, as it holds the event loop. */
  private searchTextHere({ query, collectionId, after, fileIds, k }: TextSearchRequest): TextSearchRow[] {
    const s = this.prepared();
    return (
      fileIds === undefined
        ? s.searchText.all(query, collectionId, after, k)
        : s.searchTextInFiles.all(query, collectionId, after, fileIds, k)
    ) as TextSearchRow[];
  }

  async deleteByFile(collectionId: string, fileId: string): Promise<void> {
    const select = this.prepared().selectFileBatch;
    await this.deleteInBatches(collectionId, () => select.all(collectionId, fileId, DELETE_BATCH) as UnitRow[]);
  }

  /**
   * Immediate for any size: the collection's units up to its highest seq are marked deleted (every
   * read skips them from this statement on, while units upserted later, with higher seqs, count),
   * the search thread drops it, and the rows are purged in the background in seq order, resumed by
   * the next start if this process stops first. The highest seq goes last, with the mark, so SQLite
   * never hands a marked seq to a new unit.
   */
  async deleteByCollection(collectionId: string): Promise<void> {
    if (this.isLoaded(collectionId)) this.nearest.post({ type: 'drop', collectionId });
    this.loaded.delete(collectionId);
    this.heldUpTo.delete(collectionId);
    const s = this.prepared();
    const upTo = s.maxSeq.get(collectionId) as number | null;
    if (upTo === null || upTo <= this.deletedUpTo(collectionId)) return;
    s.markDeleted.run(collectionId, upTo);
    this.purgeLater(collectionId);
  }

  async countUnits(collectionId: string): Promise<number> {
    return this.prepared().count.get(collectionId, this.deletedUpTo(collectionId)) as number;
  }

  /** Resolves once every purge started so far has finished (tests and benches wait for it). */
  whenPurged(): Promise<void> {
    return this.purges;
  }

  private purgeLater(collectionId: string): void {
    const s = this.prepared();
    const purgeBatch = () => {
      if (this.closing) return [];
      const rows = s.deletedBatch.all(collectionId, collectionId, DELETE_BATCH) as UnitRow[];
      if (rows.length < DELETE_BATCH)
        s.unmarkDeleted.run(collectionId, rows.length ? rows[rows.length - 1].seq : this.deletedUpTo(collectionId));
      return rows;
    };
    // A failed purge is resumed by the next start.
    this.purges = this.purges.then(() => this.deleteInBatches(null, purgeBatch)).catch(() => undefined);
  }

  /** Units of the collection with this seq or lower are deleted (-1: none). */
  private deletedUpTo(collectionId: string): number {
    return (this.prepared().deletedUpTo.get(collectionId) as number | undefined) ?? -1;
  }

  async ping(): Promise<void> {
    try {
      this.prepared().ping.get();
    } catch (cause) {
      throw new AppError(ErrorCode.UNAVAILABLE, 'The embedded vector index is not readable', { cause, retryable: true });
    }
  }

  /**
   * The search thread stops and purges stop after their current batch (the next start resumes
   * them); the database belongs to the storage module, which closes it on shutdown.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.stopListening();
    clearTimeout(this.announceTimer);
    await Promise.all([this.purges, this.takingIn]);
    await Promise.all([this.nearest.close(), this.reader?.close()]);
  }

  /** What the search thread holds, per collection (benches and tests wait for graphs with it). */
  async searchThreadStats() {
    return this.nearest.stats();
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
   * In a process that answers searches: another process committed vectors of `collectionId`, so it
   * is loaded (or what was committed above what the thread holds is read), as a search would, but
   * now: the first search after a worker process ingested does not wait for the load. One take-in
   * at a time; notices arriving meanwhile are taken in after it.
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
  private ensureLoaded(collectionId: string): Promise<void> {
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
    const dimension = this.collectionDimension(collectionId);
    if (dimension === undefined) return;
    const after = this.deletedUpTo(collectionId);
    const rows = this.prepared().count.get(collectionId, after) as number;
    if (!this.db.memory) {
      // Each search thread reads its share on a connection of its own: the event loop only posts
      // the load, and every core reads and codes. Rows committed above `upTo` come as any later
      // commit does: posted by this process's upserts, or taken in by catchUp.
      const upTo = (this.prepared().maxSeq.get(collectionId) as number | null) ?? after;
      if (this.loadedGeneration === this.nearest.generation) this.heldUpTo.set(collectionId, upTo);
      await this.nearest.load(collectionId, dimension, rows, { file: this.db.name, after, upTo });
      return;
    }
    // An in-memory database no other connection can open: its rows are read here and posted.
    this.nearest.post({ type: 'load', collectionId, dimension, rows });
    try {
      await this.postRowsAbove(collectionId, this.deletedUpTo(collectionId));
    } finally {
      if (this.loadedGeneration === this.nearest.generation) this.nearest.post({ type: 'loaded', collectionId });
    }
  }

  /**
   * Rows another process committed since the thread took in the collection: those above the seq it
   * holds every row up to, read by the search threads themselves (an in-memory store's are read
   * here and posted as a load's batches are); a row taken in twice is replaced.
   */
  private async catchUp(collectionId: string): Promise<void> {
    const held = this.heldUpTo.get(collectionId);
    if (held === undefined) return;
    const highest = this.prepared().maxSeq.get(collectionId) as number | null;
    if (highest === null || highest <= held) return;
    const dimension = this.collectionDimension(collectionId);
    if (this.db.memory || dimension === undefined) return this.postRowsAbove(collectionId, held);
    // Each search thread reads its share before its next message (a search posted after it sees the rows).
    this.heldUpTo.set(collectionId, highest);
    this.nearest.post({ type: 'read', collectionId, dimension, source: { file: this.db.name, after: held, upTo: highest } });
  }

  /** Posts the collection's rows above `after` to the search thread in batches, noting how far it holds them. */
  private async postRowsAbove(collectionId: string, after: number): Promise<void> {
    const select = this.prepared().vectorBatch;
    const generation = this.nearest.generation;
    const held = (upTo: number) => {
      if (generation === this.nearest.generation) this.heldUpTo.set(collectionId, Math.max(upTo, this.heldUpTo.get(collectionId) ?? -1));
    };
    held(after);
    for (let batch = 1; ; batch++) {
      const rows = select.all(collectionId, after, LOAD_BATCH) as VectorRow[];
      if (rows.length === 0) return;
      const dimension = rows[0].vector.byteLength / 4;
      const same = rows.filter((row) => row.vector.byteLength === dimension * 4);
      const vectors = new Float32Array(same.length * dimension);
      same.forEach((row, i) => vectors.set(floatsOf(row.vector), i * dimension));
      const seqs = Float64Array.from(same, (row) => row.seq);
      this.nearest.post({ type: 'add', collectionId, dimension, seqs, fileIds: same.map((row) => row.fileId), vectors }, [
        vectors.buffer,
        seqs.buffer,
      ]);
      after = rows[rows.length - 1].seq;
      held(after);
      if (rows.length < LOAD_BATCH) return;
      if (batch % LOAD_AHEAD === 0) await this.nearest.sync();
      else await yieldToEventLoop();
    }
  }

  private postRemove(collectionId: string | null, seqs: number[]): void {
    if (collectionId === null || !this.isLoaded(collectionId) || seqs.length === 0) return;
    const removed = Float64Array.from(seqs);
    this.nearest.post({ type: 'remove', collectionId, seqs: removed }, [removed.buffer]);
  }

  private prepareUnitStatements() {
    const db = this.db;
    return {
      findByIds: db.prepare(
        'SELECT u.seq AS seq, u.dimension AS dimension, u.collection_id AS collectionId FROM json_each(?) j JOIN search_units u ON u.id = j.value',
      ),
      markDeleted: db.prepare('INSERT OR REPLACE INTO search_deleted_collections (collection_id, up_to_seq) VALUES (?, ?)'),
      unmarkDeleted: db.prepare('DELETE FROM search_deleted_collections WHERE collection_id = ? AND up_to_seq <= ?'),
      deletedUpTo: db.prepare('SELECT up_to_seq FROM search_deleted_collections WHERE collection_id = ?').pluck(),
      buried: db.prepare('SELECT collection_id FROM search_deleted_collections').pluck(),
      maxSeq: db.prepare('SELECT max(seq) FROM search_units WHERE collection_id = ?').pluck(),
      deletedBatch: db.prepare(`
        SELECT seq, dimension FROM search_units
        WHERE collection_id = ? AND seq <= (SELECT up_to_seq FROM search_deleted_collections WHERE collection_id = ?)
        ORDER BY seq LIMIT ?`),
      insertVector: db.prepare('INSERT INTO search_unit_vectors (seq, vector) VALUES (?, ?)'),
      deleteVector: db.prepare('DELETE FROM search_unit_vectors WHERE seq = ?'),
      unitsBySeq: db.prepare(`
        SELECT u.seq AS seq, u.id AS unitId, u.passage_id AS passageId, u.file_id AS fileId, v.vector AS vector
        FROM json_each(?) j JOIN search_units u ON u.seq = j.value JOIN search_unit_vectors v ON v.seq = u.seq`),
      // CROSS JOIN keeps the passages outermost: left to itself the planner walks the whole
      // collection (collection_id, seq) and probes the list for each row, 30x slower at 3,000 units.
      vectorsOfPassages: db.prepare(`
        SELECT u.passage_id AS passageId, v.vector AS vector
        FROM json_each(?) j CROSS JOIN search_units u ON u.passage_id = j.value CROSS JOIN search_unit_vectors v ON v.seq = u.seq
        WHERE u.collection_id = ? AND u.seq > ?
        ORDER BY u.seq`),
      vectorBatch: db.prepare(`
        SELECT u.seq AS seq, u.file_id AS fileId, v.vector AS vector
        FROM search_units u JOIN search_unit_vectors v ON v.seq = u.seq
        WHERE u.collection_id = ? AND u.seq > ? ORDER BY u.seq LIMIT ?`),
      insertUnit: db.prepare('INSERT INTO search_units (seq, id, collection_id, file_id, passage_id, dimension) VALUES (?, ?, ?, ?, ?, ?)'),
      highestSeq: db
        .prepare(
          `SELECT max(coalesce((SELECT seq FROM search_seq_high WHERE id = 1), 0), coalesce((SELECT max(seq) FROM search_units), 0))`,
        )
        .pluck(),
      setHighestSeq: db.prepare('INSERT INTO search_seq_high (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq'),
      insertText: db.prepare('INSERT INTO search_units_fts (rowid, text) VALUES (?, ?)'),
      deleteText: db.prepare('DELETE FROM search_units_fts WHERE rowid = ?'),
      deleteUnit: db.prepare('DELETE FROM search_units WHERE seq = ?'),
      dimension: db.prepare('SELECT dimension FROM search_units WHERE collection_id = ? AND seq > ? LIMIT 1').pluck(),
      count: db.prepare('SELECT count(*) FROM search_units WHERE collection_id = ? AND seq > ?').pluck(),
      selectFileBatch: db.prepare('SELECT seq, dimension FROM search_units WHERE collection_id = ? AND file_id = ? LIMIT ?'),
      searchText: db.prepare(SEARCH_TEXT_SQL),
      searchTextInFiles: db.prepare(SEARCH_TEXT_IN_FILES_SQL),
      ping: db.prepare('SELECT 1 FROM search_units LIMIT 1'),
    };
  }

  private prepared() {
    if (!this.statements) throw new AppError(ErrorCode.INTERNAL, 'SqliteVectorIndex used before init()');
    return this.statements;
  }

  private collectionDimension(collectionId: string): number | undefined {
    return this.prepared().dimension.get(collectionId, this.deletedUpTo(collectionId)) as number | undefined;
  }

  /** Call inside a transaction. */
  private deleteRows(rows: UnitRow[]): void {
    const s = this.prepared();
    for (const { seq } of rows) {
      s.deleteVector.run(seq);
      s.deleteText.run(BigInt(seq));
      s.deleteUnit.run(seq);
    }
  }

  /**
   * Not atomic as a whole: an interrupted delete leaves fewer units, never a unit half-deleted, and
   * deleting again finishes it.
   */
  private async deleteInBatches(collectionId: string | null, nextBatch: () => UnitRow[]): Promise<void> {
    const deleteBatch = () =>
      this.writes.run(() => {
        const rows = nextBatch();
        this.deleteRows(rows);
        return rows;
      });
    for (;;) {
      const rows = await deleteBatch();
      this.postRemove(
        collectionId,
        rows.map((row) => row.seq),
      );
      if (rows.length < DELETE_BATCH) return;
      await yieldToEventLoop();
    }
  }
}

/**
 * How far from 1 a vector's squared length may be to be stored as it is. Embedders hand over unit
 * vectors (scaled in float32, so within about 1e-7): scaling them again copied every vector.
 */
const UNIT_TOLERANCE = 1e-5;

/** The vector scaled to unit length, as a little-endian float32 blob (a view of `vector` when it already is). */
function normalisedBlob(vector: Float32Array): Buffer {
  let squares = 0;
  for (let i = 0; i < vector.length; i++) squares += vector[i] * vector[i];
  const unit = Math.abs(squares - 1) <= UNIT_TOLERANCE ? vector : l2Normalize(vector);
  return Buffer.from(unit.buffer, unit.byteOffset, unit.byteLength);
}

/** 1 - cosine similarity of a unit-length query and a stored unit-length vector. */
function cosineDistanceToUnit(query: Float32Array, blob: Buffer): number {
  const stored = floatsOf(blob);
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += query[i] * stored[i];
  return Math.min(2, Math.max(0, 1 - dot));
}
