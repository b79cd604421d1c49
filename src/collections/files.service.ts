import { Injectable } from '@nestjs/common';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode } from '../common/app-error';
import { insufficientStorage, isDiskFull, mongoStorageFull } from '../common/resource-faults';
import { Page, PageRequest } from '../common/page';
import { validPage } from '../common/pagination';
import { AppConfig } from '../config/app-config';
import { parseDataUrl } from '../ingestion/data-url';
import { MAX_FILE_NAME_CHARS, MAX_URL_CHARS } from './files.dto';
import { enqueueIngestion, laneForSize } from '../ingestion/ingestion.job';
import { JobQueue } from '../domain/job-queue.port';
import { fileFieldsOf, VectorIndex } from '../domain/vector-index.port';
import { BlobStore } from '../domain/blob-store.port';
import { FILE_STATUSES, FileLane, FileProgress, FileStatus, newPendingFile, StoredFile } from '../domain/file.model';
import { parseFileFilter } from '../domain/file-filter';
import { FileMetadata, patchedMetadata, validMetadata } from '../domain/file-metadata';
import { FileStore, originalBlobKey } from '../domain/file-store.port';

export interface FileView {
  id: string;
  name: string;
  /** MIME type: as declared until the bytes were read, then as detected. */
  type: string;
  size: number;
  status: FileStatus;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** Why ingestion failed; only with status `error`. */
  error?: string;
  /** The ingestion lane: `large` for files over INGEST_LARGE_BYTES or PDFs over INGEST_LARGE_PAGES pages. */
  lane: FileLane;
  /** Where ingestion stands; only while `pending` or `processing`. */
  progress?: FileProgress;
  /** Only with status `pending`: why the last try failed for the service's own reasons (disk full, database unavailable); the file is tried again. */
  retryReason?: string;
  /** What the user attached; `{}` when nothing. */
  metadata: FileMetadata;
  /** Pages, slides or sheets, once extracted from a format that has them. */
  pages?: number;
  /** The document's own title and author, when its format carries them. */
  title?: string;
  author?: string;
}

export interface FileContent {
  id: string;
  name: string;
  type: string;
  /** The extracted text, passage after passage. */
  content: string;
}

/** One passage of a file's text: what a search hit points to. */
export interface PassageView {
  id: string;
  fileId: string;
  fileName: string;
  /** Position of the passage within its file, from 0. */
  index: number;
  /** Page of the file the passage starts on, when the format has pages. */
  page: number | null;
  content: string;
}

/** Until the bytes have been read the type is unknown. */
export const UNKNOWN_TYPE = 'application/octet-stream';
const CONTENT_PAGE = 500;

export const fileView = (file: StoredFile): FileView => ({
  id: file.id,
  name: file.name,
  type: file.mime,
  size: file.size,
  status: file.status,
  createdAt: file.createdAt.toISOString(),
  ...(file.status === 'error' && file.error ? { error: file.error } : {}),
  lane: file.lane,
  ...((file.status === 'pending' || file.status === 'processing') && file.progress ? { progress: file.progress } : {}),
  ...(file.status === 'pending' && file.error ? { retryReason: file.error } : {}),
  metadata: file.metadata,
  ...(file.pages !== null ? { pages: file.pages } : {}),
  ...(file.title !== null ? { title: file.title } : {}),
  ...(file.author !== null ? { author: file.author } : {}),
});

/** Where the bytes of a new file come from: a URL to download, or the bytes themselves. */
type FileSource = { url: string } | { bytes: Buffer; declaredType?: string };

/**
 * Files of a collection as both doors (REST and MCP) see them. Adding a file stores its record as
 * `pending` and queues its ingestion; the answer never waits for the download or the indexing.
 */
@Injectable()
export class FilesService {
  constructor(
    private readonly access: AccessPolicy,
    private readonly files: FileStore,
    private readonly blobs: BlobStore,
    private readonly index: VectorIndex,
    private readonly queue: JobQueue,
    private readonly config: AppConfig,
  ) {}

  /** `url` is http(s), downloaded by the ingestion job, or `data:`, decoded now. */
  async add(principal: Principal, collectionId: string, input: { name: string; url: string; metadata?: unknown }): Promise<FileView> {
    await this.access.require(principal, 'collection', collectionId, 'editor');
    const name = validName(input.name);
    const metadata = input.metadata === undefined ? {} : validMetadata(input.metadata);
    const url = typeof input.url === 'string' ? input.url.trim() : '';
    if (/^data:/i.test(url)) {
      const { mime, bytes } = parseDataUrl(url, this.config.MAX_FILE_BYTES);
      return this.accept(collectionId, name, { bytes, declaredType: mime }, metadata);
    }
    return this.accept(collectionId, name, { url: validHttpUrl(url) }, metadata);
  }

  async upload(
    principal: Principal,
    collectionId: string,
    input: { name: string; bytes: Buffer; contentType?: string; metadata?: unknown },
  ): Promise<FileView> {
    await this.access.require(principal, 'collection', collectionId, 'editor');
    const name = validName(input.name);
    const metadata = input.metadata === undefined ? {} : validMetadata(input.metadata);
    if (input.bytes.length > this.config.MAX_FILE_BYTES) throw AppError.fileTooLarge(this.config.MAX_FILE_BYTES);
    return this.accept(collectionId, name, { bytes: input.bytes, declaredType: input.contentType }, metadata);
  }

  /**
   * Changes a file's metadata by a JSON merge patch. Nothing is re-embedded: filters read the
   * store (or the index's copy, replaced here), so the next search sees the change.
   */
  async patch(principal: Principal, collectionId: string, fileId: string, input: { metadata: unknown }): Promise<FileView> {
    await this.access.require(principal, 'collection', collectionId, 'editor');
    const file = await this.load(collectionId, fileId);
    const metadata = patchedMetadata(file.metadata, input.metadata);
    if (!(await this.files.update(file.id, { metadata }))) throw AppError.notFound('file', fileId);
    // An index that keeps file fields with the units is told too: the next search filters on the change.
    if (this.index.filtersFileFields) await this.index.setFileFields(collectionId, file.id, fileFieldsOf({ ...file, metadata }));
    return fileView({ ...file, metadata });
  }

  /** Oldest first; only files in `statuses` when any are given, only files `filter` keeps when given. */
  async list(
    principal: Principal,
    collectionId: string,
    page: PageRequest,
    statuses: readonly FileStatus[] = [],
    filter?: unknown,
  ): Promise<Page<FileView>> {
    await this.access.require(principal, 'collection', collectionId, 'viewer');
    const checked = validPage(page);
    const unknown = statuses.filter((status) => !FILE_STATUSES.includes(status));
    if (unknown.length)
      throw AppError.validation([{ field: 'status', reason: `must be among ${FILE_STATUSES.join(', ')}, got ${unknown.join(', ')}` }]);
    const result = await this.files.list(collectionId, checked, statuses, filter === undefined ? undefined : parseFileFilter(filter));
    return { items: result.items.map(fileView), total: result.total };
  }

  async get(principal: Principal, collectionId: string, fileId: string): Promise<FileView> {
    await this.access.require(principal, 'collection', collectionId, 'viewer');
    return fileView(await this.load(collectionId, fileId));
  }

  /** The extracted text of an indexed file. */
  async content(principal: Principal, collectionId: string, fileId: string): Promise<FileContent> {
    await this.access.require(principal, 'collection', collectionId, 'viewer');
    const file = await this.load(collectionId, fileId);
    if (file.status !== 'indexed') {
      throw AppError.conflict(`file ${fileId} has no extracted text: its status is ${file.status}${file.error ? ` (${file.error})` : ''}`, {
        status: file.status,
      });
    }
    const parts: string[] = [];
    for (let after = -1; ;) {
      const passages = await this.files.listPassages(file.id, after, CONTENT_PAGE);
      for (const passage of passages) parts.push(passage.content);
      if (passages.length < CONTENT_PAGE) break;
      after = passages[passages.length - 1].index;
    }
    // Passages end on paragraph or sentence boundaries; a blank line between them reads naturally.
    return { id: file.id, name: file.name, type: file.mime, content: parts.join('\n\n') };
  }

  /** One passage of a file, as a search hit names it. */
  async passage(principal: Principal, collectionId: string, fileId: string, passageId: string): Promise<PassageView> {
    await this.access.require(principal, 'collection', collectionId, 'viewer');
    const file = await this.load(collectionId, fileId);
    const [passage] = await this.files.getPassages([passageId]);
    if (!passage || passage.fileId !== file.id) throw AppError.notFound('passage', passageId);
    return { id: passage.id, fileId: file.id, fileName: file.name, index: passage.index, page: passage.page, content: passage.content };
  }

  /** Removes the record, its passages, its vectors and its original bytes. */
  async delete(principal: Principal, collectionId: string, fileId: string): Promise<void> {
    await this.access.require(principal, 'collection', collectionId, 'editor');
    const file = await this.load(collectionId, fileId);
    // The record goes first: search stops returning the file at once, and an ingestion still
    // running sees it gone and removes what it writes after this.
    await this.files.delete(file.id);
    await this.index.deleteByFile(collectionId, file.id);
    await this.blobs.delete(originalBlobKey(file));
  }

  private async accept(collectionId: string, name: string, source: FileSource, metadata: FileMetadata): Promise<FileView> {
    const mime = ('declaredType' in source && mimeOf(source.declaredType)) || UNKNOWN_TYPE;
    // A file given by URL has no known size yet: the standard lane moves it once it is downloaded.
    const lane =
      'bytes' in source
        ? laneForSize(source.bytes.length, { largeBytes: this.config.INGEST_LARGE_BYTES, largePages: this.config.INGEST_LARGE_PAGES })
        : 'standard';
    const file = newPendingFile(collectionId, name, source, mime, new Date(), lane, metadata);
    try {
      if ('bytes' in source) await this.blobs.put(originalBlobKey(file), source.bytes);
      // Stored before queued: a job never exists for a file the store does not have.
      await this.files.create(file);
      await enqueueIngestion(this.queue, { collectionId, fileId: file.id }, lane);
    } catch (error) {
      // Not accepted, so nothing of it stays.
      await this.files.delete(file.id).catch(() => undefined);
      await this.blobs.delete(originalBlobKey(file)).catch(() => undefined);
      throw await this.storageFull(error, file.size);
    }
    return fileView(file);
  }

  /** A full disk anywhere on the way (blobs, the database, the embedded queue's table) is a 507 saying what to free. */
  private async storageFull(error: unknown, bytesNeeded: number): Promise<unknown> {
    if (error instanceof AppError && error.code === ErrorCode.INSUFFICIENT_STORAGE) return error;
    if (!isDiskFull(error) && !isDiskFull((error as { cause?: unknown } | null)?.cause)) return error;
    if (this.config.MONGODB_URI) return mongoStorageFull(error);
    return insufficientStorage({ path: this.config.dataDir, bytesNeeded: bytesNeeded || undefined }, error);
  }

  private async load(collectionId: string, fileId: string): Promise<StoredFile> {
    const file = await this.files.get(collectionId, fileId);
    if (!file) throw AppError.notFound('file', fileId);
    return file;
  }
}

function validName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name.length < 1 || name.length > MAX_FILE_NAME_CHARS) {
    throw AppError.validation([{ field: 'name', reason: `must be 1 to ${MAX_FILE_NAME_CHARS} characters after trimming` }]);
  }
  if (/[\u0000-\u001f\u007f]/.test(name)) {
    throw AppError.validation([{ field: 'name', reason: 'must not contain control characters' }]);
  }
  return name;
}

function validHttpUrl(url: string): string {
  const reason = (() => {
    if (!url) return 'must be an http, https or data: URL';
    if (url.length > MAX_URL_CHARS) return `must be at most ${MAX_URL_CHARS} characters`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'must be an absolute http, https or data: URL';
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      return `the ${parsed.protocol.replace(/:$/, '')} scheme is not supported; use http, https or data:`;
    }
    return null;
  })();
  if (reason) throw AppError.validation([{ field: 'url', reason }]);
  return url;
}

/** `text/plain; charset=utf-8` -> `text/plain`; anything that is not a MIME type -> undefined. */
function mimeOf(declared: string | undefined): string | undefined {
  const mime = declared?.split(';')[0].trim().toLowerCase();
  return mime && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(mime) ? mime : undefined;
}
