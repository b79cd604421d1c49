import type Database from 'better-sqlite3';
import { UNITS_BY_SEQ_SQL } from './float-rerank';
import { BoundedTextSearch } from './text/bounded-text-search';
import { prepareVectorPairs, UNIT_VECTOR, UNIT_VECTOR_FOUND, UNIT_VECTOR_JOIN } from './vector-pairs';

/** A unit's row as deletes read it. */
export interface UnitRow {
  seq: number;
  dimension: number;
}

/** The embedded index's statements over its unit tables (search_units and the tables keyed by its seq). */
export type UnitStatements = ReturnType<typeof prepareUnitStatements>;

export function prepareUnitStatements(db: Database.Database) {
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
    vectorPairs: prepareVectorPairs(db),
    /** Vectors of units stores wrote before the pairs (vector-pairs.ts). */
    deleteVector: db.prepare('DELETE FROM search_unit_vectors WHERE seq = ?'),
    unitsBySeq: db.prepare(UNITS_BY_SEQ_SQL),
    // CROSS JOIN keeps the passages outermost: left to itself the planner walks the whole
    // collection (collection_id, seq) and probes the list for each row, 30x slower at 3,000 units.
    vectorsOfPassages: db.prepare(`
      SELECT u.passage_id AS passageId, ${UNIT_VECTOR} AS vector
      FROM json_each(?) j CROSS JOIN search_units u ON u.passage_id = j.value ${UNIT_VECTOR_JOIN}
      WHERE u.collection_id = ? AND u.seq > ? AND ${UNIT_VECTOR_FOUND}
      ORDER BY u.seq`),
    vectorBatch: db.prepare(`
      SELECT u.seq AS seq, u.file_id AS fileId, ${UNIT_VECTOR} AS vector
      FROM search_units u ${UNIT_VECTOR_JOIN}
      WHERE u.collection_id = ? AND u.seq > ? AND ${UNIT_VECTOR_FOUND} ORDER BY u.seq LIMIT ?`),
    insertUnit: db.prepare('INSERT INTO search_units (seq, id, collection_id, file_id, passage_id, dimension) VALUES (?, ?, ?, ?, ?, ?)'),
    highestSeq: db
      .prepare(`SELECT max(coalesce((SELECT seq FROM search_seq_high WHERE id = 1), 0), coalesce((SELECT max(seq) FROM search_units), 0))`)
      .pluck(),
    setHighestSeq: db.prepare('INSERT INTO search_seq_high (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq'),
    insertText: db.prepare('INSERT INTO search_units_fts (rowid, text) VALUES (?, ?)'),
    deleteText: db.prepare('DELETE FROM search_units_fts WHERE rowid = ?'),
    deleteUnit: db.prepare('DELETE FROM search_units WHERE seq = ?'),
    dimension: db.prepare('SELECT dimension FROM search_units WHERE collection_id = ? AND seq > ? LIMIT 1').pluck(),
    count: db.prepare('SELECT count(*) FROM search_units WHERE collection_id = ? AND seq > ?').pluck(),
    selectFileBatch: db.prepare('SELECT seq, dimension FROM search_units WHERE collection_id = ? AND file_id = ? LIMIT ?'),
    searchText: new BoundedTextSearch(db),
    ping: db.prepare('SELECT 1 FROM search_units LIMIT 1'),
  };
}
