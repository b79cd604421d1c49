import type Database from 'better-sqlite3';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { AppError, ErrorCode } from '../../common/app-error';
import {
  assertSearchK,
  assertUsableVector,
  dimensionsByCollection,
  embeddingMismatch,
  IndexUnit,
  TextHit,
  VectorHit,
  VectorIndex,
} from '../../domain/vector-index.port';
import { toFts5Query } from './fts5-query';

/**
 * Units deleted per transaction. A vec0 delete costs tens of microseconds, so a batch holds the
 * event loop for a few tens of milliseconds and a 100,000-unit collection still goes in seconds.
 */
export const DELETE_BATCH = 500;

interface UnitRow {
  seq: number;
  dimension: number;
}

interface VectorStatements {
  insert: Database.Statement;
  delete: Database.Statement;
  knn: Database.Statement;
}

const vectorTable = (dimension: number) => `search_vectors_${dimension}`;

/**
 * The embedded index: sqlite-vec for vectors and FTS5 for BM25, in the service's SQLite file.
 *
 * `search_units` maps each unit to its collection, file, passage and dimension; its integer `seq` is
 * the rowid of the unit in the vector table of its dimension (`search_vectors_<dim>`, a vec0 table
 * partitioned by collection, created on first use) and in `search_units_fts`. The FTS table is
 * contentless: the text already lives in the passage store, and BM25 needs only the index.
 *
 * Search is exact (a scan of the collection's partition). Vectors are stored L2-normalised and
 * scanned by L2 distance, which ranks exactly as cosine distance does on unit vectors (cosine
 * distance = L2² / 2); sqlite-vec 0.1.9 computes L2 faster than its cosine metric (0.65-0.8 of the
 * CPU time at 100,000 x 512, see test/bench/search.bench.ts). Quantised pre-filters were measured
 * and left out: int8 scans no faster in 0.1.9, and bit vectors with a float re-rank need thousands
 * of candidates, which vec0's top-k selection makes slow, to keep recall on low-contrast data.
 *
 * better-sqlite3 is synchronous: each call is one short statement or one transaction, and bulk
 * deletes go in batches with the event loop let through between them.
 */
export class SqliteVectorIndex extends VectorIndex {
  private statements?: ReturnType<SqliteVectorIndex['prepareUnitStatements']>;
  private readonly vectorStatements = new Map<number, VectorStatements>();

  /** @param db an open database with sqlite-vec loaded; the caller owns it and closes it. */
  constructor(private readonly db: Database.Database) {
    super();
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
      CREATE VIRTUAL TABLE IF NOT EXISTS search_units_fts USING fts5(
        text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2'
      );
    `);
    this.statements = this.prepareUnitStatements();
  }

  async upsert(units: IndexUnit[]): Promise<void> {
    if (units.length === 0) return;
    const dimensions = dimensionsByCollection(units);
    const blobs = units.map((unit) => normalisedBlob(unit.vector));
    // DDL stays out of the transaction: a rolled-back CREATE would leave the statement cache stale.
    for (const dimension of new Set(dimensions.values())) this.vectorStatementsFor(dimension);
    const s = this.prepared();

    this.db.transaction(() => {
      // Replaced units go first, so they do not count as the collection's existing vectors.
      for (const unit of units) {
        const existing = s.findById.get(unit.id) as UnitRow | undefined;
        if (existing) this.deleteRows([existing]);
      }
      for (const [collectionId, dimension] of dimensions) {
        const existing = this.collectionDimension(collectionId);
        if (existing !== undefined && existing !== dimension) throw embeddingMismatch(collectionId, existing, dimension);
      }
      units.forEach((unit, i) => {
        const seq = s.insertUnit.run(unit.id, unit.collectionId, unit.fileId, unit.passageId, unit.vector.length).lastInsertRowid;
        this.vectorStatementsFor(unit.vector.length).insert.run(BigInt(seq), unit.collectionId, blobs[i]);
        s.insertText.run(BigInt(seq), unit.text);
      });
    })();
  }

  async searchVector(collectionId: string, vector: Float32Array, k: number): Promise<VectorHit[]> {
    assertSearchK(k);
    assertUsableVector(vector, 'Query vector');
    const dimension = this.collectionDimension(collectionId);
    if (dimension === undefined) return [];
    if (dimension !== vector.length) throw embeddingMismatch(collectionId, dimension, vector.length);
    const rows = this.vectorStatementsFor(dimension).knn.all(normalisedBlob(vector), k, collectionId) as {
      unitId: string;
      passageId: string;
      fileId: string;
      l2: number;
    }[];
    return rows.map(({ unitId, passageId, fileId, l2 }) => ({
      unitId,
      passageId,
      fileId,
      distance: Math.min(2, (l2 * l2) / 2),
    }));
  }

  async searchText(collectionId: string, text: string, k: number): Promise<TextHit[]> {
    assertSearchK(k);
    const query = toFts5Query(text);
    if (query === null) return [];
    const rows = this.prepared().searchText.all(query, collectionId, k) as (Omit<TextHit, 'score'> & { bm25: number })[];
    // FTS5's bm25() is negated so that ascending order is best first; the port's score is not.
    return rows.map(({ unitId, passageId, fileId, bm25 }) => ({ unitId, passageId, fileId, score: -bm25 }));
  }

  async deleteByFile(collectionId: string, fileId: string): Promise<void> {
    const select = this.prepared().selectFileBatch;
    await this.deleteInBatches(() => select.all(collectionId, fileId, DELETE_BATCH) as UnitRow[]);
  }

  async deleteByCollection(collectionId: string): Promise<void> {
    const select = this.prepared().selectCollectionBatch;
    await this.deleteInBatches(() => select.all(collectionId, DELETE_BATCH) as UnitRow[]);
  }

  async countUnits(collectionId: string): Promise<number> {
    return this.prepared().count.get(collectionId) as number;
  }

  async ping(): Promise<void> {
    try {
      this.prepared().ping.get();
    } catch (cause) {
      throw new AppError(ErrorCode.UNAVAILABLE, 'The embedded vector index is not readable', { cause, retryable: true });
    }
  }

  /** The database belongs to the storage module, which closes it on shutdown. */
  async close(): Promise<void> {}

  private prepareUnitStatements() {
    const db = this.db;
    return {
      findById: db.prepare('SELECT seq, dimension FROM search_units WHERE id = ?'),
      insertUnit: db.prepare('INSERT INTO search_units (id, collection_id, file_id, passage_id, dimension) VALUES (?, ?, ?, ?, ?)'),
      insertText: db.prepare('INSERT INTO search_units_fts (rowid, text) VALUES (?, ?)'),
      deleteText: db.prepare('DELETE FROM search_units_fts WHERE rowid = ?'),
      deleteUnit: db.prepare('DELETE FROM search_units WHERE seq = ?'),
      dimension: db.prepare('SELECT dimension FROM search_units WHERE collection_id = ? LIMIT 1').pluck(),
      count: db.prepare('SELECT count(*) FROM search_units WHERE collection_id = ?').pluck(),
      selectFileBatch: db.prepare('SELECT seq, dimension FROM search_units WHERE collection_id = ? AND file_id = ? LIMIT ?'),
      selectCollectionBatch: db.prepare('SELECT seq, dimension FROM search_units WHERE collection_id = ? LIMIT ?'),
      // MATCH drives the plan; the collection filter is a primary-key join per matching row.
      searchText: db.prepare(`
        SELECT u.id AS unitId, u.passage_id AS passageId, u.file_id AS fileId, bm25(search_units_fts) AS bm25
        FROM search_units_fts JOIN search_units u ON u.seq = search_units_fts.rowid
        WHERE search_units_fts MATCH ? AND u.collection_id = ?
        ORDER BY bm25, u.id
        LIMIT ?`),
      ping: db.prepare('SELECT 1 FROM search_units LIMIT 1'),
    };
  }

  private prepared() {
    if (!this.statements) throw new AppError(ErrorCode.INTERNAL, 'SqliteVectorIndex used before init()');
    return this.statements;
  }

  private vectorStatementsFor(dimension: number): VectorStatements {
    let statements = this.vectorStatements.get(dimension);
    if (!statements) {
      const table = vectorTable(dimension);
      // IF NOT EXISTS: another connection to the same file may have created it since.
      this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING vec0(
        collection_id TEXT PARTITION KEY,
        embedding FLOAT[${dimension}] distance_metric=L2
      )`);
      statements = {
        insert: this.db.prepare(`INSERT INTO ${table} (rowid, collection_id, embedding) VALUES (?, ?, ?)`),
        delete: this.db.prepare(`DELETE FROM ${table} WHERE rowid = ?`),
        knn: this.db.prepare(`
          SELECT u.id AS unitId, u.passage_id AS passageId, u.file_id AS fileId, v.distance AS l2
          FROM (SELECT rowid, distance FROM ${table} WHERE embedding MATCH ? AND k = ? AND collection_id = ?) v
          JOIN search_units u ON u.seq = v.rowid
          ORDER BY v.distance, u.id`),
      };
      this.vectorStatements.set(dimension, statements);
    }
    return statements;
  }

  private collectionDimension(collectionId: string): number | undefined {
    return this.prepared().dimension.get(collectionId) as number | undefined;
  }

  /** Call inside a transaction. */
  private deleteRows(rows: UnitRow[]): void {
    const s = this.prepared();
    for (const { seq, dimension } of rows) {
      this.vectorStatementsFor(dimension).delete.run(BigInt(seq));
      s.deleteText.run(BigInt(seq));
      s.deleteUnit.run(seq);
    }
  }

  /**
   * Not atomic as a whole: an interrupted delete leaves fewer units, never a unit half-deleted, and
   * deleting again finishes it.
   */
  private async deleteInBatches(nextBatch: () => UnitRow[]): Promise<void> {
    const deleteBatch = this.db.transaction(() => {
      const rows = nextBatch();
      this.deleteRows(rows);
      return rows.length;
    });
    while (deleteBatch() === DELETE_BATCH) await yieldToEventLoop();
  }
}

/** The vector scaled to unit length, as the little-endian float32 blob sqlite-vec reads. */
function normalisedBlob(vector: Float32Array): Buffer {
  let squares = 0;
  for (let i = 0; i < vector.length; i++) squares += vector[i] * vector[i];
  const norm = Math.sqrt(squares);
  const unit = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) unit[i] = vector[i] / norm;
  return Buffer.from(unit.buffer, unit.byteOffset, unit.byteLength);
}
