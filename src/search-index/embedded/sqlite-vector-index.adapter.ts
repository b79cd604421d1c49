// The store's side of the embedded index: its unit tables, writes and reads. The search threads'
// side (loads, posts, take-ins) is nearest/search-thread-mirror.ts; the statements, unit-statements.ts.
import type Database from 'better-sqlite3';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { AppError, ErrorCode } from '../../common/app-error';
import { l2Normalize } from '../../embeddings/vectors';
import { CheckpointThread, checkpointThreadOf } from '../../storage/embedded/checkpoint-thread';
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
import { floatsOf, normalisedBlob } from './float-blob';
import { FloatRerankThread, rerankByFloats } from './float-rerank';
import { toFts5Query } from './fts5-query';
import { NearestThreads } from './nearest/nearest-threads';
import { SearchThreadMirror, TakeInTiming, VectorNotices } from './nearest/search-thread-mirror';
import { TextReader } from './text/text-reader';
import { processNotices } from '../../common/process-notices';
import { TextSearchRequest, TextSearchRow } from './text/text-search-sql';
import { prepareUnitStatements, UnitRow, UnitStatements } from './unit-statements';
import { pruneVectorPairs, VECTOR_PAIRS_TABLE, writeVectorPairs } from './vector-pairs';

export type { VectorNotices };

/**
 * Units deleted per transaction. A vec0 delete costs tens of microseconds, so a batch holds the
 * event loop for a few tens of milliseconds and a 100,000-unit collection still goes in seconds.
 */
export const DELETE_BATCH = 500;

export interface SqliteVectorIndexOptions {
  /** The search threads; one set per index. */
  nearest?: NearestThreads;
  /**
   * The text reader thread, on its own connection to the same file; null runs BM25 on the database
   * itself (an in-memory database, which no other connection can open).
   */
  reader?: TextReader | null;
  /**
   * The thread that re-ranks a vector search's candidates by their float vectors, on its own
   * connection to the same file; null re-ranks on the database itself (an in-memory database).
   */
  reranker?: FloatRerankThread | null;
  /**
   * Whether this process answers searches (APP_ROLE all or api; default). It keeps the collections
   * ingested into, here or in other processes (told by their notices), loaded in its search
   * threads, so the first search after ingestion does not pay the load. A worker process that only
   * ingests leaves them out (see upsert) and tells the others of its commits instead.
   */
  answersSearches?: boolean;
  /** The channel to the service's other processes (default: this process's). */
  notices?: VectorNotices;
  /** When what other processes commit is taken in (default TAKE_IN_TIMING; tests shorten or lengthen it). */
  takeIn?: TakeInTiming;
}
/**
 * Code-ranked hits per wanted hit that are re-ranked by their float vectors: the int8 codes rank
 * within about 0.003 of the float distance, so a small margin settles the final order exactly.
 */
const RERANK_MARGIN = 16;

/**
 * The embedded index: vectors and BM25 in the service's SQLite file (the source of truth), searched
 * by search threads that hold int8 codes of every vector (each thread a share of every collection's
 * rows), grouped in cells per large collection.
 *
 * `search_units` maps each unit to its collection, file, passage and dimension; its integer `seq`
 * keys the unit's float vector (stored L2-normalised), two to a row in `search_vector_pairs`
 * (vector-pairs.ts; `search_unit_vectors`, one a row, holds those of older stores), and its row in
 * `search_units_fts`. The FTS table is contentless: the text already lives in the passage store,
 * and BM25 needs only the index.
 *
 * The search thread (nearest/) is derived state: a collection is loaded into it from the store on
 * first use after start, each write is committed to the store first and then posted to the thread,
 * and a thread that dies is started again and reloaded. A crash at any point therefore leaves
 * nothing to repair: the next start rebuilds from what the store committed. The thread ranks by
 * int8 codes (exactly below EXACT_SCAN_BELOW units, in the nearest cells above); the hits it returns
 * are re-ranked by their float vectors, so distances are exact.
 *
 * better-sqlite3 is synchronous: each call is one short statement or one transaction, and bulk
 * reads and deletes go in batches with the event loop let through between them. BM25 searches,
 * whose cost grows with the collection (a common word matches most units), run in the text reader
 * thread (text/) on a read-only connection of its own: in WAL mode it sees every committed write.
 * So does the float re-rank of vector searches, in a reader thread of its own (float-rerank.ts).
 */
export class SqliteVectorIndex extends VectorIndex {
  private statements?: UnitStatements;
  /** Background purges of deleted collections, one after another. */
  private purges = Promise.resolve();
  private closing = false;
  /**
   * Upserts and deletes commit through the connection's group commit: with worker processes on the
   * same file, a write lock held by another process is asked for again from the event loop instead
   * of sleeping the process in SQLite's busy wait, and the writes of one turn share one commit.
   */
  private readonly writes: GroupCommit;
  /**
   * WAL checkpoints off this event loop (see CheckpointThread), started by the first upsert: a
   * process that ingests writes most of the file's pages, and its checkpoints held its event loop
   * for more than half of an ingestion.
   */
  private checkpoints?: CheckpointThread;

  private readonly nearest: NearestThreads;
  private readonly reader: TextReader | null;
  private readonly reranker: FloatRerankThread | null;
  /** What the search threads hold of the store, kept in step with its commits. */
  private readonly mirror: SearchThreadMirror;

  /** @param db an open database; the caller owns it and closes it. */
  constructor(
    private readonly db: Database.Database,
    options: SqliteVectorIndexOptions = {},
  ) {
    super();
    this.writes = groupCommitOf(db);
    this.nearest = options.nearest ?? new NearestThreads();
    this.reader = options.reader !== undefined ? options.reader : db.memory ? null : new TextReader(db.name);
    this.reranker = options.reranker !== undefined ? options.reranker : db.memory ? null : new FloatRerankThread(db.name);
    const store = {
      db,
      prepared: () => this.prepared(),
      collectionDimension: (collectionId: string) => this.collectionDimension(collectionId),
      deletedUpTo: (collectionId: string) => this.deletedUpTo(collectionId),
    };
    this.mirror = new SearchThreadMirror(
      store,
      this.nearest,
      options.answersSearches ?? true,
      options.notices ?? processNotices,
      options.takeIn,
    );
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
      ${VECTOR_PAIRS_TABLE};
      CREATE TABLE IF NOT EXISTS search_deleted_collections (collection_id TEXT PRIMARY KEY, up_to_seq INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS search_seq_high (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
    `);
    this.moveVec0Tables();
    this.statements = prepareUnitStatements(this.db);
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
    if (!this.closing) this.checkpoints ??= checkpointThreadOf(this.db);
    // One pass over each vector checks it and gives its length, which decides whether it is stored as it is.
    const squares = new Float64Array(units.length);
    const dimensions = dimensionsByCollection(units, squares);
    const blobs = units.map((unit, i) => normalisedBlob(unit.vector, squares[i]));
    const s = this.prepared();

    const ids = JSON.stringify(units.map((unit) => unit.id));
    const { seqs, removed } = await this.writes.run(() => {
      // Its own list in each run of the write (the group commit may run it again): only the committed run's counts.
      const removed: { collectionId: string; seq: number }[] = [];
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
      const first = seq + 1;
      const given = units.map((unit) => {
        seq += 1;
        s.insertUnit.run(seq, unit.id, unit.collectionId, unit.fileId, unit.passageId, unit.vector.length);
        s.insertText.run(seq, unit.text);
        return seq;
      });
      writeVectorPairs(s.vectorPairs, first, blobs);
      s.setHighestSeq.run(seq);
      return { seqs: given, removed };
    });

    // Committed: now the search thread, which only ever holds what the store has.
    for (const { collectionId, seq } of removed) this.mirror.postRemove(collectionId, [seq]);
    this.mirror.committed(units, blobs, seqs, dimensions);
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
    await this.mirror.ensureLoaded(collectionId);
    await this.mirror.catchUp(collectionId);
    const query = l2Normalize(vector);
    const { seqs } = await this.nearest.search(collectionId, query, k + Math.min(k, RERANK_MARGIN), fileIds ? [...fileIds] : undefined);
    if (seqs.length === 0) return [];
    // Off the event loop: the candidates' rows and floats are read in the re-rank thread.
    const request = { query, seqs, k };
    const { hits, missing } = this.reranker ? await this.reranker.ask(request) : rerankByFloats(this.prepared().unitsBySeq, request);
    // Rows deleted since the search threads answered, by another process: they let them go, so
    // they no longer take places in later answers.
    this.mirror.postRemove(collectionId, missing);
    return hits;
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
  private searchTextHere(request: TextSearchRequest): TextSearchRow[] {
    return this.prepared().searchText.search(request);
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
    this.mirror.drop(collectionId);
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
    await Promise.all([this.purges, this.mirror.close()]);
    await Promise.all([this.nearest.close(), this.reader?.close(), this.reranker?.close(), this.checkpoints?.close()]);
  }

  /** What the search thread holds, per collection (benches and tests wait for graphs with it). */
  async searchThreadStats() {
    return this.nearest.stats();
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
    pruneVectorPairs(
      s.vectorPairs,
      rows.map((row) => row.seq),
    );
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
      this.mirror.postRemove(
        collectionId,
        rows.map((row) => row.seq),
      );
      if (rows.length < DELETE_BATCH) return;
      await yieldToEventLoop();
    }
  }
}
