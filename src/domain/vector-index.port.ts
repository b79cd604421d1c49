import { AppError, ErrorCode } from '../common/app-error';
import type { FileFilter } from './file-filter';
import type { FileMetadata } from './file-metadata';
import type { StoredFile } from './file.model';

/**
 * What the index stores: one embedding unit (a sentence window sized for the embedder) that points
 * to the passage a search returns. Passages themselves live in the document store.
 */
export interface IndexUnit {
  id: string;
  collectionId: string;
  fileId: string;
  passageId: string;
  /** Indexed for BM25; not returned by searches. */
  text: string;
  vector: Float32Array;
}

export interface VectorHit {
  unitId: string;
  passageId: string;
  fileId: string;
  /** Cosine distance (1 - cosine similarity, 0..2); hits come in ascending order. */
  distance: number;
}

export interface TextHit {
  unitId: string;
  passageId: string;
  fileId: string;
  /** BM25 relevance, higher is better; hits come in descending order. Comparable within one query only. */
  score: number;
}

/**
 * Restricts a search to the units of some files: the seam between what users filter on (file ids,
 * types, metadata) and the index. An index that keeps file fields with its units
 * (`filtersFileFields`) takes the filter itself (FieldsFilter); any other takes the set of files
 * whose units may be returned, resolved against the file store by whoever builds the filter.
 * Either way the index answers k-NN within the files kept at any selectivity: the embedded index
 * scans the set's vectors exactly when it is small (a 1% filter at 1M units: about 10,000 rows)
 * and walks its graph with the set as a predicate when it is broad; Elasticsearch takes ids or
 * the filter's query as `knn.filter`. An empty set matches nothing; no filter is every file of the collection.
 */
export type UnitFilter = { fileIds: readonly string[] } | FieldsFilter;

/**
 * A file filter the index applies itself, on the file fields it keeps with each unit (see
 * VectorIndex.setFileFields): only given to an index whose `filtersFileFields` is true, so no list
 * of file ids, however long, has to be resolved first.
 */
export interface FieldsFilter {
  files: FileFilter;
}

/** The fields of a file a filter may test, as an index that filters on them keeps them. */
export interface FileFields {
  name: string;
  type: string;
  size: number;
  pages: number | null;
  title: string | null;
  author: string | null;
  createdAt: Date;
  metadata: FileMetadata;
}

/** A stored file's filterable fields. */
export function fileFieldsOf(file: StoredFile): FileFields {
  const { name, mime: type, size, pages, title, author, createdAt, metadata } = file;
  return { name, type, size, pages, title, author, createdAt, metadata };
}

/** The file ids of a filter by ids; an index that does not filter on file fields is never given another. */
export function fileIdsOf(filter: UnitFilter): readonly string[] {
  if ('fileIds' in filter) return filter.fileIds;
  throw new AppError(ErrorCode.INTERNAL, 'this index takes filters as file ids only');
}

/** Most files a filter may name: Elasticsearch's default `index.max_terms_count`. */
export const MAX_FILTER_FILES = 65_536;

/** Throws unless the filter is within MAX_FILTER_FILES. */
export function assertUnitFilter(filter: UnitFilter | undefined): void {
  if (filter && 'fileIds' in filter && filter.fileIds.length > MAX_FILTER_FILES) {
    throw AppError.validation([
      { field: 'filter', reason: `may match at most ${MAX_FILTER_FILES} files; it matched ${filter.fileIds.length}` },
    ]);
  }
}

/** Largest `k` a search accepts: sqlite-vec's KNN limit, well under Elasticsearch's candidate cap. */
export const MAX_SEARCH_K = 4096;

/** Most passages `passageVectors` reads in one call: a search asks for one page and MMR's pool. */
export const MAX_VECTOR_PASSAGES = 1_024;

/** Throws unless `passageIds` is within MAX_VECTOR_PASSAGES. */
export function assertVectorPassages(passageIds: readonly string[]): void {
  if (passageIds.length > MAX_VECTOR_PASSAGES) {
    throw AppError.validation([
      { field: 'passageIds', reason: `may name at most ${MAX_VECTOR_PASSAGES} passages; it named ${passageIds.length}` },
    ]);
  }
}

/** Largest vector dimension accepted: the `dense_vector` limit of Elasticsearch. */
export const MAX_VECTOR_DIMENSION = 4096;

/**
 * The vector + keyword index of embedding units. Every search is scoped to one collection.
 *
 * A collection holds vectors of one dimension: the dimension of its existing units, whatever the
 * other collections use. Upserting or searching with another dimension fails with
 * EMBEDDING_MISMATCH (the collection was embedded by another model); a collection whose units were
 * all deleted accepts any dimension again.
 */
export abstract class VectorIndex {
  /**
   * True when the index keeps each file's fields with its units and takes a FieldsFilter; false
   * (the default) when a filter must reach it as file ids.
   */
  get filtersFileFields(): boolean {
    return false;
  }

  /**
   * Keeps a file's filterable fields with its units, replacing what was kept: after the file is
   * indexed, and whenever its metadata changes. Units written later carry none until the next
   * call. A no-op for an index that does not filter on file fields.
   */
  async setFileFields(collectionId: string, fileId: string, fields: FileFields): Promise<void> {
    void collectionId;
    void fileId;
    void fields;
  }

  /** Creates tables or the index with an explicit mapping. Idempotent; call once before use. */
  abstract init(): Promise<void>;

  /**
   * Inserts units, replacing any unit with the same id. All-or-nothing on a dimension mismatch:
   * nothing of the batch is written.
   */
  abstract upsert(units: IndexUnit[]): Promise<void>;

  /**
   * The `k` nearest units by cosine distance, nearest first, among the units of `filter.fileIds`
   * when a filter is given. An empty collection yields []. May be approximate on large collections:
   * the embedded index keeps recall@10 >= 0.95 against an exact scan.
   */
  abstract searchVector(collectionId: string, vector: Float32Array, k: number, filter?: UnitFilter): Promise<VectorHit[]>;

  /**
   * The `k` best units by BM25 for the words of `text`, any of which may match, among the units of
   * `filter.fileIds` when given. `text` is user input,
   * never query syntax: operators and punctuation in it are taken as plain words or ignored.
   */
  abstract searchText(collectionId: string, text: string, k: number, filter?: UnitFilter): Promise<TextHit[]>;

  /**
   * The stored vectors of the passages' units (their embedded windows), by passage id, read back
   * rather than embedded again: a search gives a passage that only BM25 found its distance to the
   * query from them. Passages of the collection only; one with no unit (deleted meanwhile) is
   * absent. At most MAX_VECTOR_PASSAGES passages per call. Vectors may come scaled to unit length.
   */
  abstract passageVectors(collectionId: string, passageIds: readonly string[]): Promise<Map<string, Float32Array[]>>;

  abstract deleteByFile(collectionId: string, fileId: string): Promise<void>;

  abstract deleteByCollection(collectionId: string): Promise<void>;

  abstract countUnits(collectionId: string): Promise<number>;

  /** Readiness: resolves when the backing engine answers, throws AppError(UNAVAILABLE) otherwise. */
  abstract ping(): Promise<void>;

  abstract close(): Promise<void>;
}

/** Throws unless `k` is a whole number in 1..MAX_SEARCH_K. */
export function assertSearchK(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > MAX_SEARCH_K) {
    throw AppError.validation([{ field: 'k', reason: `must be an integer from 1 to ${MAX_SEARCH_K}` }]);
  }
}

/**
 * Throws EMBEDDING_FAILED for a vector that has no cosine distance to anything: empty, too long,
 * non-finite, or zero. Such a vector is an embedder fault, not something to store.
 */
export function assertUsableVector(vector: Float32Array, what: string): void {
  usableSquares(vector, what);
}

/**
 * The sum of a vector's squares, in four sums (every fourth component each) added at the end: one
 * sum is a chain of dependent additions, each waiting for the last (422-498 ns a 512-d vector
 * against 249-307 for four, measured in one process). Every vector an upsert stores or an embedder
 * hands over is checked this way once.
 */
export function sumOfSquares(values: ArrayLike<number>): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  const n = values.length;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    a += values[i] * values[i];
    b += values[i + 1] * values[i + 1];
    c += values[i + 2] * values[i + 2];
    d += values[i + 3] * values[i + 3];
  }
  for (; i < n; i++) a += values[i] * values[i];
  return a + b + c + d;
}

/** assertUsableVector's check, which returns the vector's sum of squares it took (one pass for both). */
function usableSquares(vector: Float32Array, what: string): number {
  if (vector.length === 0 || vector.length > MAX_VECTOR_DIMENSION) {
    throw new AppError(ErrorCode.EMBEDDING_FAILED, `${what} has ${vector.length} dimensions; expected 1 to ${MAX_VECTOR_DIMENSION}`);
  }
  const squares = sumOfSquares(vector);
  if (!Number.isFinite(squares)) throw new AppError(ErrorCode.EMBEDDING_FAILED, `${what} has a non-finite component`);
  if (squares === 0) throw new AppError(ErrorCode.EMBEDDING_FAILED, `${what} is a zero vector`);
  return squares;
}

/** A collection embedded by another model than this service's: its vectors and ours cannot be compared. */
export function modelMismatch(
  collectionId: string,
  theirs: { model: string; dimension: number | null },
  ours: { model: string; dimension: number },
): AppError {
  return new AppError(
    ErrorCode.EMBEDDING_MISMATCH,
    `collection ${collectionId} holds vectors of ${theirs.model} (${theirs.dimension ?? '?'} dimensions); this service embeds with ` +
      `${ours.model} (${ours.dimension} dimensions), whose vectors cannot be compared or mixed with them`,
    {
      details: {
        collectionId,
        collectionModel: theirs.model,
        collectionDimension: theirs.dimension,
        model: ours.model,
        dimension: ours.dimension,
      },
    },
  );
}

export function embeddingMismatch(collectionId: string, expected: number, got: number): AppError {
  return new AppError(
    ErrorCode.EMBEDDING_MISMATCH,
    `Collection ${collectionId} holds ${expected}-dimensional vectors; got ${got} dimensions`,
    { details: { collectionId, expected, got } },
  );
}

/**
 * Validates a batch and returns the one dimension of each collection in it. Throws
 * EMBEDDING_MISMATCH when a batch mixes dimensions within one collection. With `squares`, each
 * unit's sum of squares (taken by the check) is written there, for an index that scales to unit
 * length without another pass over the vector.
 */
export function dimensionsByCollection(units: readonly IndexUnit[], squares?: Float64Array): Map<string, number> {
  const dimensions = new Map<string, number>();
  for (let i = 0; i < units.length; i++) {
    const unit = units[i];
    const sum = usableSquares(unit.vector, `Vector of unit ${unit.id}`);
    if (squares) squares[i] = sum;
    const known = dimensions.get(unit.collectionId);
    if (known === undefined) dimensions.set(unit.collectionId, unit.vector.length);
    else if (known !== unit.vector.length) throw embeddingMismatch(unit.collectionId, known, unit.vector.length);
  }
  return dimensions;
}
