import type Database from 'better-sqlite3';

/**
 * Units' float vectors, two to a row: the row `pair` holds the vector of seq 2·pair (first) and of
 * seq 2·pair + 1 (last), either alone once the other is gone or not yet written.
 *
 * One vector a row (`search_unit_vectors`, still read for the rows stores wrote before) took a
 * 4,096-byte page alone: a 512-float vector is 2,048 bytes, and two such records and their headers do
 * not fit in a page. Ingestion wrote that page to the WAL, then the checkpoint read it back and wrote
 * it into the file: about four fifths of the pages ingestion writes. Two vectors make a record past
 * a page, so SQLite keeps 489 bytes of it in the leaf (eight rows a leaf) and the rest in one
 * overflow page: 1.1 pages for two vectors. A vector is found by its unit's seq and dimension alone
 * (the even seq's is the row's first `dimension` floats, the odd seq's its last), so vectors of
 * several dimensions share rows, and nothing else is stored.
 */
export const VECTOR_PAIRS_TABLE = `CREATE TABLE IF NOT EXISTS search_vector_pairs (pair INTEGER PRIMARY KEY, vectors BLOB NOT NULL)`;

/** Joins a unit row `u` to where its vector may be: `v` (one a row, older stores) or `p` (pairs). */
export const UNIT_VECTOR_JOIN = `LEFT JOIN search_unit_vectors v ON v.seq = u.seq LEFT JOIN search_vector_pairs p ON p.pair = u.seq >> 1`;

/** UNIT_VECTOR_JOIN found the unit's vector (an inner join on it, without evaluating UNIT_VECTOR twice). */
export const UNIT_VECTOR_FOUND = `(v.seq IS NOT NULL OR p.pair IS NOT NULL)`;

/** The vector of unit row `u` (its little-endian float32 blob) through UNIT_VECTOR_JOIN; NULL if it has none. */
export const UNIT_VECTOR = `coalesce(v.vector, CASE WHEN u.seq % 2 = 0 THEN substr(p.vectors, 1, u.dimension * 4) ELSE substr(p.vectors, -u.dimension * 4) END)`;

export type VectorPairStatements = ReturnType<typeof prepareVectorPairs>;

export function prepareVectorPairs(db: Database.Database) {
  return {
    insert: db.prepare('INSERT INTO search_vector_pairs (pair, vectors) VALUES (?, ?)'),
    /** An odd seq's vector after its even partner's, written by an earlier batch (or alone, if that one is gone). */
    append: db.prepare(
      `INSERT INTO search_vector_pairs (pair, vectors) VALUES (?, ?)
       ON CONFLICT (pair) DO UPDATE SET vectors = CAST(vectors || excluded.vectors AS BLOB)`,
    ),
    /** A pair whose two units are both gone (or the one written, while the other is not yet). */
    prune: db.prepare(
      'DELETE FROM search_vector_pairs WHERE pair = ? AND NOT EXISTS (SELECT 1 FROM search_units WHERE seq BETWEEN ? AND ?)',
    ),
  };
}

/**
 * Writes the vectors of consecutive seqs (`first` and on, as an upsert hands them out). Call inside
 * the transaction that inserts their units.
 */
export function writeVectorPairs(s: VectorPairStatements, first: number, blobs: readonly Buffer[]): void {
  let i = 0;
  // An odd first seq completes the row its even partner's batch started.
  if (first % 2 === 1) s.append.run((first - 1) / 2, blobs[i++]);
  for (; i < blobs.length; i += 2) {
    const seq = first + i;
    s.insert.run(seq / 2, i + 1 < blobs.length ? pairOf(blobs[i], blobs[i + 1]) : blobs[i]);
  }
}

/**
 * Two vectors as one row's blob: a view over both where the second follows the first in memory (an
 * embeddings answer decodes its vectors side by side), else a copy of the two. Copying every pair
 * together (a 4 KB buffer each) was about 2% of an ingesting worker process's CPU.
 */
function pairOf(first: Buffer, last: Buffer): Buffer {
  if (first.buffer === last.buffer && first.byteOffset + first.byteLength === last.byteOffset)
    return Buffer.from(first.buffer, first.byteOffset, first.byteLength + last.byteLength);
  return Buffer.concat([first, last]);
}

/** Removes the rows of pairs that no unit points to any more, after those units' rows were deleted (same transaction). */
export function pruneVectorPairs(s: VectorPairStatements, seqs: readonly number[]): void {
  const pairs = new Set(seqs.map((seq) => Math.floor(seq / 2)));
  for (const pair of pairs) s.prune.run(pair, pair * 2, pair * 2 + 1);
}
