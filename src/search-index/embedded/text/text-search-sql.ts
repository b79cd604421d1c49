/**
 * BM25 over one collection's units, best first: the statements of `searchText`, run by the text
 * reader thread (text-reader.worker.ts) on its own connection, or on the main one for an in-memory
 * database. MATCH drives the plan (CROSS JOIN keeps the FTS table outermost); the collection filter
 * is a primary-key join per matching row. Left to itself, the planner walked the collection's units
 * and ran the MATCH for each one: 4 s against 15 ms at 3,000 units under load.
 * Parameters: FTS5 query, collection id, deleted-up-to seq, [file ids as JSON,] k.
 */
export const SEARCH_TEXT_SQL = `
  SELECT u.id AS unitId, u.passage_id AS passageId, u.file_id AS fileId, bm25(search_units_fts) AS bm25
  FROM search_units_fts CROSS JOIN search_units u ON u.seq = search_units_fts.rowid
  WHERE search_units_fts MATCH ? AND u.collection_id = ? AND u.seq > ?
  ORDER BY bm25, u.id
  LIMIT ?`;

/** SEARCH_TEXT_SQL within the files of a filter (a JSON array of file ids). */
export const SEARCH_TEXT_IN_FILES_SQL = `
  SELECT u.id AS unitId, u.passage_id AS passageId, u.file_id AS fileId, bm25(search_units_fts) AS bm25
  FROM search_units_fts CROSS JOIN search_units u ON u.seq = search_units_fts.rowid
  WHERE search_units_fts MATCH ? AND u.collection_id = ? AND u.seq > ? AND u.file_id IN (SELECT value FROM json_each(?))
  ORDER BY bm25, u.id
  LIMIT ?`;

/** One BM25 search, as the reader thread takes it. */
export interface TextSearchRequest {
  /** An FTS5 query built by toFts5Query, never user syntax. */
  query: string;
  collectionId: string;
  /** Units with this seq or lower belong to a deleted collection. */
  after: number;
  /** JSON array of the filter's file ids; absent without a filter. */
  fileIds?: string;
  k: number;
}

/** A row of either statement: FTS5's bm25() is negated, ascending is best first. */
export interface TextSearchRow {
  unitId: string;
  passageId: string;
  fileId: string;
  bm25: number;
}

export type TextReaderMessage = TextSearchRequest & { id: number };

export type TextReaderReply = { id: number; rows: TextSearchRow[] } | { id: number; error: string };
