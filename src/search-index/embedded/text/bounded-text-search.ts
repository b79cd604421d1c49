import type Database from 'better-sqlite3';
import type { TextSearchRequest, TextSearchRow } from './text-search-sql';

/**
 * Matching units one keyword search ranks at most. FTS5 has no top-k pruning: BM25 is computed for
 * every unit a query matches, so a word most passages hold made one search rank the whole collection
 * (3 million units at a million passages: seconds of a thread per search). Past this many matches in
 * the collection, a search ranks a bounded set instead (see BoundedTextSearch).
 */
export const TEXT_RANKED_UNITS = 20_000;

/**
 * BM25 of the `limit` newest matching units of one collection (highest seq first: FTS5 walks its
 * doclists by descending rowid and stops there), best first, with how many were matched (up to
 * `limit`). MATCH drives the plan (CROSS JOIN keeps the FTS table outermost); the collection filter
 * is a primary-key join per matching row. Left to itself, the planner walked the collection's units
 * and ran the MATCH for each one: 4 s against 15 ms at 3,000 units under load.
 * Parameters: query (FTS5), collectionId, after (deleted-up-to seq), [fileIds (JSON),] limit, k.
 */
function rankedSql(inFiles: boolean): string {
  return `
  WITH matched AS MATERIALIZED (
    SELECT u.seq AS seq, u.id AS unitId, u.passage_id AS passageId, u.file_id AS fileId, bm25(search_units_fts) AS bm25
    FROM search_units_fts CROSS JOIN search_units u ON u.seq = search_units_fts.rowid
    WHERE search_units_fts MATCH @query AND u.collection_id = @collectionId AND u.seq > @after
      ${inFiles ? 'AND u.file_id IN (SELECT value FROM json_each(@fileIds))' : ''}
    ORDER BY search_units_fts.rowid DESC
    LIMIT @limit + 1)
  SELECT unitId, passageId, fileId, bm25, (SELECT count(*) FROM matched) AS matched
  FROM matched
  -- One past the limit tells that more units match; that oldest one is not ranked.
  WHERE (SELECT count(*) FROM matched) <= @limit OR seq > (SELECT min(seq) FROM matched)
  ORDER BY bm25, unitId LIMIT @k`;
}

/** Units of the whole store (every collection) that hold one term, counted up to a bound. */
const TERM_UNITS_SQL = 'SELECT count(*) FROM (SELECT rowid FROM search_units_fts WHERE search_units_fts MATCH ? LIMIT ?)';

/**
 * BM25 over one collection's units, best first, with the work of one search bounded:
 *   - a query matching at most `rankedUnits` units of the collection is ranked whole, exactly;
 *   - past that, its words that each match more than `rankedUnits` units of the store are common:
 *     when some of its words are not, the units holding those (the rarer) words are ranked whole by
 *     them alone, and the newest units matching the common words follow when they are fewer than k
 *     (a common word's IDF is low, and past half the units FTS5 gives it none at all);
 *   - a query of common words only ranks the `rankedUnits` newest units it matches.
 * Run by the text reader thread (text-reader.worker.ts) on its own connection, or on the main one
 * for an in-memory database.
 */
export class BoundedTextSearch {
  private readonly ranked: Database.Statement;
  private readonly rankedInFiles: Database.Statement;
  private readonly termUnits: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly rankedUnits = TEXT_RANKED_UNITS,
  ) {
    this.ranked = db.prepare(rankedSql(false));
    this.rankedInFiles = db.prepare(rankedSql(true));
    this.termUnits = db.prepare(TERM_UNITS_SQL).pluck();
  }

  search(request: TextSearchRequest): TextSearchRow[] {
    const newest = this.rank(request.query, request);
    if (newest.matched <= this.rankedUnits) return newest.rows;
    // Terms are quoted words joined by OR (toFts5Query): a quoted word holds no space.
    const terms = request.query.split(' OR ');
    const rare = terms.filter((term) => (this.termUnits.get(term, this.rankedUnits + 1) as number) <= this.rankedUnits);
    if (rare.length === 0 || rare.length === terms.length) return newest.rows;
    // Each rare term matches at most rankedUnits units of the store: ranked whole, the work stays bounded.
    const byRare = this.rank(rare.join(' OR '), request, rare.length * this.rankedUnits).rows;
    const found = new Set(byRare.map((row) => row.unitId));
    return [...byRare, ...newest.rows.filter((row) => !found.has(row.unitId))].slice(0, request.k);
  }

  /** The k best of the `limit` newest units `query` matches, and how many it matched (limit + 1: more than limit). */
  private rank(query: string, request: TextSearchRequest, limit = this.rankedUnits): { rows: TextSearchRow[]; matched: number } {
    const { collectionId, after, fileIds, k } = request;
    const statement = fileIds === undefined ? this.ranked : this.rankedInFiles;
    const rows = statement.all({
      query,
      collectionId,
      after,
      limit,
      k,
      ...(fileIds === undefined ? {} : { fileIds }),
    }) as (TextSearchRow & {
      matched: number;
    })[];
    return {
      rows: rows.map(({ unitId, passageId, fileId, bm25 }) => ({ unitId, passageId, fileId, bm25 })),
      matched: rows[0]?.matched ?? 0,
    };
  }
}
