// The float re-rank of a vector search's candidates: in the re-rank thread (float-rerank.worker.ts)
// on a read-only connection of its own, or on the main connection of an in-memory store.
import type Database from 'better-sqlite3';
import type { VectorHit } from '../../domain/vector-index.port';
import { workerFile } from '../../common/worker-path';
import { cosineDistanceToUnit } from './float-blob';
import { ReaderThread } from './reader-thread';
import { UNIT_VECTOR, UNIT_VECTOR_FOUND, UNIT_VECTOR_JOIN } from './vector-pairs';

/** The candidates' unit rows and float vectors, by seq: one indexed read a candidate. */
export const UNITS_BY_SEQ_SQL = `
  SELECT u.seq AS seq, u.id AS unitId, u.passage_id AS passageId, u.file_id AS fileId, ${UNIT_VECTOR} AS vector
  FROM json_each(?) j JOIN search_units u ON u.seq = j.value ${UNIT_VECTOR_JOIN}
  WHERE ${UNIT_VECTOR_FOUND}`;

export interface RerankRequest {
  /** The query, unit length. */
  query: Float32Array;
  /** The candidates the search threads ranked nearest by their codes. */
  seqs: Float64Array;
  k: number;
}

export interface Reranked {
  /** The `k` nearest candidates by their float vectors, nearest first (ties by unit id). */
  hits: VectorHit[];
  /** Candidates no longer in the store (deleted since the search threads answered, here or by another process). */
  missing: number[];
}

/** Reads the candidates with `select` (UNITS_BY_SEQ_SQL) and ranks them by their exact distances. */
export function rerankByFloats(select: Database.Statement, { query, seqs, k }: RerankRequest): Reranked {
  const rows = select.all(JSON.stringify(Array.from(seqs))) as {
    seq: number;
    unitId: string;
    passageId: string;
    fileId: string;
    vector: Buffer;
  }[];
  const missing: number[] = [];
  if (rows.length < seqs.length) {
    const present = new Set(rows.map((row) => row.seq));
    for (const seq of seqs) if (!present.has(seq)) missing.push(seq);
  }
  const hits = rows.map(({ unitId, passageId, fileId, vector }) => ({
    unitId,
    passageId,
    fileId,
    distance: cosineDistanceToUnit(query, vector),
  }));
  hits.sort((a, b) => a.distance - b.distance || (a.unitId < b.unitId ? -1 : a.unitId > b.unitId ? 1 : 0));
  return { hits: hits.slice(0, k), missing };
}

/**
 * The re-rank thread: reading the candidates' rows and float vectors (a 4 KiB page each, through
 * read calls: mmap is off) and computing their distances took a third of the event loop's CPU while
 * 8 clients searched through the API. A thread of its own rather than the text reader's, so a
 * re-rank never waits behind a BM25 search over a large collection.
 */
export class FloatRerankThread extends ReaderThread<RerankRequest, Reranked> {
  constructor(file: string, workerPath = workerFile(__dirname, 'float-rerank.worker')) {
    super(file, workerPath, { request: 'Vector search', thread: 're-rank thread' });
  }
}
