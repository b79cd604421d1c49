import Database from 'better-sqlite3';
import { ownFloats, type VectorBatch } from '../float-blob';
import { UNIT_VECTOR, UNIT_VECTOR_FOUND, UNIT_VECTOR_JOIN } from '../vector-pairs';
import { type LoadSource, SHARD_OF_UNIT_SQL } from './nearest-protocol';

/**
 * Rows a search thread reads from the store per step of a load: about 10-20 ms of reading and
 * coding, so messages (searches of other collections, adds, removes) wait no longer than that.
 */
export const READ_STEP = 2_048;

/** One read-only connection per file in this thread, opened by the first load that reads it. */
const connections = new Map<string, Database.Statement>();

/** One step of a share as the statement gives it: its rows' seqs, files and floats, each aggregated in one value. */
interface StepRow {
  rows: number;
  last: number | null;
  /** JSON arrays. */
  seqs: string;
  fileIds: string;
  /** The rows' vectors one after another (null when no row). */
  vectors: Buffer | null;
}

function stepStatement(file: string): Database.Statement {
  let select = connections.get(file);
  if (!select) {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    // A load reads each page once, in order: through read calls and SQLite's small page cache, not
    // a memory map, whose pages (up to the whole file) would count in the process's resident memory.
    db.pragma('mmap_size = 0');
    // The (collection_id, seq) index gives the step's rows, the lowest seqs of this thread's share
    // above `after`; they come back as one row: the seqs and files as JSON arrays, the vectors as one
    // blob (the aggregates see the rows in the same order, so the i-th of each is the same row). A
    // row a step, as JavaScript objects each holding a buffer of its own, then copied into a batch,
    // cost about twice the instructions of the whole step. Rows of another dimension (a collection
    // re-embedded meanwhile) are left out, as their add would be refused.
    select = db.prepare(`
      SELECT count(*) AS rows, max(seq) AS last, json_group_array(seq) AS seqs, json_group_array(fileId) AS fileIds,
        CAST(group_concat(vector, '') AS BLOB) AS vectors
      FROM (
        SELECT u.seq AS seq, u.file_id AS fileId, ${UNIT_VECTOR} AS vector
        FROM search_units u ${UNIT_VECTOR_JOIN}
        WHERE u.collection_id = ? AND u.seq > ? AND u.seq <= ? AND ${SHARD_OF_UNIT_SQL} = ? AND u.dimension * 4 = ? AND ${UNIT_VECTOR_FOUND}
        ORDER BY u.seq LIMIT ?)`);
    connections.set(file, select);
  }
  return select;
}

/**
 * A search thread's share of one collection, read from the store by the thread itself (the rows
 * whose shardOf is its shard: whole vector pairs), READ_STEP rows at a time: the service's main thread takes no
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
    const step = stepStatement(file).get(
      this.collectionId,
      this.after,
      upTo,
      this.shards,
      this.shard,
      this.dimension * 4,
      READ_STEP,
    ) as StepRow;
    if (step.rows === 0 || step.vectors === null || step.last === null) {
      this.after = upTo;
      return undefined;
    }
    this.after = step.rows < READ_STEP ? upTo : step.last;
    return {
      seqs: Float64Array.from(JSON.parse(step.seqs) as number[]),
      fileIds: JSON.parse(step.fileIds) as string[],
      vectors: ownFloats(step.vectors),
    };
  }
}
