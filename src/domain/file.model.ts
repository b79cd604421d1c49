import { newId } from '../common/ids';
import type { FileMetadata } from './file-metadata';

export const FILE_STATUSES = ['pending', 'processing', 'indexed', 'error'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

/** Ingestion lanes, each with its own concurrency: large files (by size or page count) never hold small ones. */
export const FILE_LANES = ['standard', 'large'] as const;
export type FileLane = (typeof FILE_LANES)[number];

/**
 * Where ingestion of a file stands. `done` of `total`: bytes while fetching (total 0 while the size is
 * unknown), parts of the document (PDF pages, sheets, slides) while embedding and indexing, 0 of 0
 * while queued and extracting.
 */
export const PROGRESS_STAGES = ['queued', 'fetching', 'extracting', 'embedding', 'indexing'] as const;
export type ProgressStage = (typeof PROGRESS_STAGES)[number];

export interface FileProgress {
  stage: ProgressStage;
  done: number;
  total: number;
}

export const QUEUED: FileProgress = { stage: 'queued', done: 0, total: 0 };

export interface StoredFile {
  id: string;
  collectionId: string;
  name: string;
  /** The declared MIME type until ingestion has read the bytes, then the detected one. */
  mime: string;
  /** Bytes of the original; 0 until a file given by URL has been downloaded. */
  size: number;
  status: FileStatus;
  /**
   * Readable reason when `status` is `error`; with `pending`, why the last try failed for the
   * service's own reasons (disk full, database unavailable), the file being tried again.
   */
  error: string | null;
  lane: FileLane;
  /** Where ingestion stands; meaningful while `pending` or `processing`. */
  progress: FileProgress | null;
  /** The http(s) URL to download; null when the bytes were handed over (upload, `data:`) and sit in the blob store. */
  sourceUrl: string | null;
  /** Passages (search results) the file was cut into. */
  chunkCount: number;
  /** Characters of extracted text across those passages. */
  characterCount: number;
  /** What users attached (see file-metadata.ts); `{}` when nothing. */
  metadata: FileMetadata;
  /** Pages (PDF), slides or sheets the document has, once extracted; null when unknown or not paged. */
  pages: number | null;
  /** The document's own title and author, when its format carries them (PDF, DOCX, HTML title). */
  title: string | null;
  author: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What search returns as `content`: about 1,000 characters of one file, in reading order by `index`. */
export interface Passage {
  id: string;
  collectionId: string;
  fileId: string;
  /** 0-based position within the file. */
  index: number;
  content: string;
  /** 1-based PDF page the passage starts on. */
  page: number | null;
}

export interface FileContentStats {
  files: Record<FileStatus, number> & { total: number };
  bytes: number;
  chunks: number;
  characters: number;
}

/** A file just accepted: `pending`, with its bytes already in hand (upload, `data:`) or a URL to download. */
export function newPendingFile(
  collectionId: string,
  name: string,
  source: { bytes: Buffer } | { url: string },
  mime: string,
  now = new Date(),
  lane: FileLane = 'standard',
  metadata: FileMetadata = {},
): StoredFile {
  return {
    id: newId('fle'),
    collectionId,
    name,
    mime,
    size: 'bytes' in source ? source.bytes.length : 0,
    status: 'pending',
    error: null,
    lane,
    progress: QUEUED,
    sourceUrl: 'url' in source ? source.url : null,
    chunkCount: 0,
    characterCount: 0,
    metadata,
    pages: null,
    title: null,
    author: null,
    createdAt: now,
    updatedAt: now,
  };
}
