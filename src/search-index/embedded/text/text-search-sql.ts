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
