import { Page, PageRequest } from '../common/page';
import type { FileFilter } from './file-filter';
import type { FileContentStats, FileStatus, Passage, StoredFile } from './file.model';

export type FileUpdate = Partial<
  Pick<
    StoredFile,
    'mime' | 'size' | 'error' | 'chunkCount' | 'characterCount' | 'lane' | 'progress' | 'metadata' | 'pages' | 'title' | 'author'
  >
>;

/**
 * File records of collections and the passages their text was cut into. The vectors that find
 * passages live in the VectorIndex and the original bytes in the BlobStore; this store keeps
 * what a person reads.
 */
export abstract class FileStore {
  abstract create(file: StoredFile): Promise<void>;
  abstract get(collectionId: string, fileId: string): Promise<StoredFile | null>;
  /**
   * Oldest first, so offset paging is stable while files are being added; only `statuses` when
   * given (non-empty), only files the filter keeps when given.
   */
  abstract list(collectionId: string, page: PageRequest, statuses?: readonly FileStatus[], filter?: FileFilter): Promise<Page<StoredFile>>;
  /**
   * Ids of the collection's `indexed` files the filter keeps, at most `limit` (the caller asks for
   * one more than it accepts to know it was exceeded). Answered by the store's own query language
   * (SQLite JSON functions, a Mongo query), never by reading every file.
   */
  abstract matchingIds(collectionId: string, filter: FileFilter, limit: number): Promise<string[]>;
  /** The files among `ids` that exist, in no particular order. */
  abstract getMany(ids: readonly string[]): Promise<StoredFile[]>;
  /**
   * Moves the file to `to` only if it is in one of `from` (compare-and-set, so two workers cannot
   * both claim it and a deleted file stays deleted); applies `update` in the same step.
   */
  abstract transition(fileId: string, from: readonly FileStatus[], to: FileStatus, update?: FileUpdate): Promise<boolean>;
  /** Returns false when the file no longer exists. */
  abstract update(fileId: string, update: FileUpdate): Promise<boolean>;
  /** Files in any of `statuses` across collections, by id, for the reconciler to page through. */
  abstract listByStatus(statuses: readonly FileStatus[], limit: number, afterId?: string): Promise<StoredFile[]>;
  /** Removes the record and its passages. Returns false when it did not exist. */
  abstract delete(fileId: string): Promise<boolean>;
  /** Removes every file of the collection and their passages; returns how many files. */
  abstract deleteByCollection(collectionId: string): Promise<number>;
  abstract stats(collectionId: string): Promise<FileContentStats>;

  abstract insertPassages(passages: readonly Passage[]): Promise<void>;
  abstract deletePassages(fileId: string): Promise<void>;
  /** The passages among `ids` that exist, in no particular order. */
  abstract getPassages(ids: readonly string[]): Promise<Passage[]>;
  /** Passages of one file in reading order, `limit` at a time after index `afterIndex` (-1 for the start). */
  abstract listPassages(fileId: string, afterIndex: number, limit: number): Promise<Passage[]>;
}

/** One row per status, as the stores aggregate them. */
export interface FileStatusTotals {
  status: FileStatus;
  files: number;
  bytes: number;
  chunks: number;
  characters: number;
}

/** Folds the per-status totals of a store's aggregation into the collection's stats. */
export function foldFileStats(rows: readonly FileStatusTotals[]): FileContentStats {
  const stats: FileContentStats = {
    files: { total: 0, pending: 0, processing: 0, indexed: 0, error: 0 },
    bytes: 0,
    chunks: 0,
    characters: 0,
  };
  for (const row of rows) {
    stats.files[row.status] = row.files;
    stats.files.total += row.files;
    stats.bytes += row.bytes;
    stats.chunks += row.chunks;
    stats.characters += row.characters;
  }
  return stats;
}

/** Where the original bytes of a file live in the BlobStore; one folder per collection. */
export const originalBlobKey = (file: Pick<StoredFile, 'collectionId' | 'id'>): string => `files/${file.collectionId}/${file.id}`;

export const collectionBlobFolder = (collectionId: string): string => `files/${collectionId}`;
