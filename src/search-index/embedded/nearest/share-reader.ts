import Database from 'better-sqlite3';
import { packRows, type VectorBatch, type VectorRow } from '../float-blob';
import type { LoadSource } from './nearest-protocol';

/**
 * Rows a search thread reads from the store per step of a load: about 10-20 ms of reading and
 * coding, so messages (searches of other collections, adds, removes) wait no longer than that.
 */
export const READ_STEP = 2_048;

/** One read-only connection per file in this thread, opened by the first load that reads it. */
const connections = new Map<string, Database.Statement>();

function rowsStatement(file: string): Database.Statement {
  let select = connections.get(file);
  if (!select) {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    // A load reads each page once, in order: through read calls and SQLite's small page cache, not
    // a memory map, whose pages (up to the whole file) would count in the process's resident memory.
    db.pragma('mmap_size = 0');
    // The (collection_id, seq) index gives the rows in seq order; this thread keeps those of its share.
    select = db.prepare(`
      SELECT u.seq AS seq, u.file_id AS fileId, v.vector AS vector
      FROM search_units u JOIN search_unit_vectors v ON v.seq = u.seq
      WHERE u.collection_id = ? AND u.seq > ? AND u.seq <= ? AND u.seq % ? = ?
      ORDER BY u.seq LIMIT ?`);
    connections.set(file, select);
  }
  return select;
}

/**
 * A search thread's share of one collection, read from the store by the thread itself (the rows
 * whose seq % shards is its shard), READ_STEP rows at a time: the service's main thread takes no
 * part in a load, and every search thread reads and codes its share on a core of its own. Each step
 * is a statement of its own, so it reads what was committed by then; rows of another dimension
 * (a collection re-embedded meanwhile) are left out, as their add would be refused.
 */
export class ShareReader {
  private after: number;

  constructor(
    private readonly collectionId: string,
    private readonly dimension: number,
    private readonly source: LoadSource,
    private readonly shards: number,
    private readonly shard: number,
  ) {
    this.after = source.after;
  }

  /** The next rows of the share, or undefined once every row up to `source.upTo` was read. */
  next(): VectorBatch | undefined {
    if (this.after >= this.source.upTo) return undefined;
    const { file, upTo } = this.source;
    const rows = rowsStatement(file).all(this.collectionId, this.after, upTo, this.shards, this.shard, READ_STEP) as VectorRow[];
    if (rows.length === 0) {
      this.after = upTo;
      return undefined;
    }
    this.after = rows.length < READ_STEP ? upTo : rows[rows.length - 1].seq;
    return packRows(rows, this.dimension);
  }
}
