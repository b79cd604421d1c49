import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeLargeTextPdf } from '../../test/fixtures/pdf-builder';
import { AppError, ErrorCode } from '../common/app-error';
import { newId } from '../common/ids';
import { SafeFetch } from '../common/safe-fetch';
import { loadConfig } from '../config/app-config';
import { Embedder, EmbedOptions } from '../domain/embedder.port';
import { JobContext } from '../domain/job-queue.port';
import { Metrics } from '../metrics/metrics.service';
import { SqliteVectorIndex } from '../search-index/embedded/sqlite-vector-index.adapter';
import { FileFields } from '../domain/vector-index.port';
import { FilesystemBlobStore } from '../storage/embedded/filesystem-blob-store.adapter';
import { SqliteCollectionStore } from '../storage/embedded/sqlite-collection-store.adapter';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteFileStore } from '../storage/embedded/sqlite-file-store.adapter';
import { newPendingFile, StoredFile } from '../domain/file.model';
import { originalBlobKey } from '../domain/file-store.port';
import { chunk } from './chunker';
import { detectType } from './detect-type';
import { DEFAULT_BATCH_SIZE, DEFAULT_IN_FLIGHT } from './document-indexer';
import { ExtractorPool } from './extractors/extractor-pool';
import { FileIngestJob } from './ingestion.job';
import { IngestionService } from './ingestion.service';
import pino from 'pino';
import { RecordingQueue } from '../../test/utils/recording-queue';

/** Deterministic vectors from character codes; counts calls and how many run at once. */
class FakeEmbedder extends Embedder {
  readonly dimension = 16;
  calls = 0;
  running = 0;
  maxRunning = 0;
  /** Runs before each call answers; may throw to fail it. */
  onCall?: (call: number) => Promise<void> | void;

  constructor(readonly model = 'fake-16') {
    super();
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const call = ++this.calls;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      options.signal?.throwIfAborted();
      await this.onCall?.(call);
      return texts.map((text) => {
        const v = new Float32Array(this.dimension).fill(0.01);
        for (let i = 0; i < text.length; i++) v[i % this.dimension] += text.charCodeAt(i) / 1000;
        return v;
      });
    } finally {
      this.running--;
    }
  }

  async close(): Promise<void> {}
}

describe('IngestionService', () => {
  let dir: string;
  let db: SqliteDb;
  let files: SqliteFileStore;
  let blobs: FilesystemBlobStore;
  let collections: SqliteCollectionStore;
  let index: SqliteVectorIndex;
  let extractor: ExtractorPool;
  let fetcher: SafeFetch;
  let embedder: FakeEmbedder;
  let service: IngestionService;
  let collectionId: string;

  const config = loadConfig({ MAX_FILE_BYTES: String(20 * 1024 * 1024) });

  beforeAll(async () => {
    Logger.overrideLogger(false);
    dir = mkdtempSync(join(tmpdir(), 'ingestion-'));
    db = openSqliteDatabase(dir);
    files = new SqliteFileStore(db);
    blobs = new FilesystemBlobStore(join(dir, 'blobs'));
    collections = new SqliteCollectionStore(db);
    index = new SqliteVectorIndex(db);
    await index.init();
    extractor = new ExtractorPool({ threads: 1, timeoutMs: 60_000 });
    fetcher = new SafeFetch({
      allowedHosts: [],
      connectTimeoutMs: 2000,
      timeoutMs: 5000,
      maxBytes: config.MAX_FILE_BYTES,
      lookup: async (host) => (host === 'intranet.test' ? [{ address: '10.0.0.5', family: 4 }] : []),
    });
  });
  afterAll(async () => {
    await extractor.close();
    await fetcher.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    embedder = new FakeEmbedder();
    service = new IngestionService(
      files,
      blobs,
      collections,
      index,
      embedder,
      extractor,
      fetcher,
      pino({ level: 'silent' }),
      new Metrics(),
    );
    collectionId = newId('col');
    const now = new Date();
    await collections.create({
      id: collectionId,
      name: 'c',
      ownerId: 'usr_x',
      createdAt: now,
      updatedAt: now,
      embeddingModel: null,
      embeddingDimension: null,
    });
  });

  async function storedFile(source: { bytes: Buffer; name?: string } | { url: string }): Promise<StoredFile> {
    const name = 'name' in source && source.name ? source.name : 'doc.pdf';
    const file = newPendingFile(collectionId, name, source, 'application/octet-stream');
    if ('bytes' in source) await blobs.put(originalBlobKey(file), source.bytes);
    await files.create(file);
    return file;
  }

  function job(file: StoredFile, overrides: Partial<JobContext<FileIngestJob>> = {}): JobContext<FileIngestJob> {
    return {
      id: file.id,
      name: 'file.ingest',
      data: { collectionId: file.collectionId, fileId: file.id },
      attempt: 1,
      maxAttempts: 3,
      signal: new AbortController().signal,
      ...overrides,
    };
  }

  const reload = async (file: StoredFile) => (await files.get(file.collectionId, file.id))!;

  it('indexes a many-page PDF into exactly the passages and windows of the chunker, in order', async () => {
    const pdf = makeLargeTextPdf(60);
    const file = await storedFile({ bytes: pdf });
    await service.ingest(job(file));

    const expected = chunk(await extractor.extract(Buffer.from(pdf), detectType(pdf)));
    const indexed = await reload(file);
    expect(indexed).toMatchObject({
      status: 'indexed',
      error: null,
      mime: 'application/pdf',
      size: pdf.length,
      chunkCount: expected.passages.length,
      characterCount: expected.passages.reduce((sum, p) => sum + p.content.length, 0),
    });
    const passages = await files.listPassages(file.id, -1, 10_000);
    expect(passages.map((p) => [p.index, p.content, p.page])).toEqual(expected.passages.map((p, i) => [i, p.content, p.page]));
    expect(await index.countUnits(collectionId)).toBe(expected.windows.length);
    expect(await collections.get(collectionId)).toMatchObject({ embeddingModel: 'fake-16', embeddingDimension: 16 });
    // Streamed: several embedder calls, a bounded number of them at once.
    expect(embedder.calls).toBe(Math.ceil(expected.windows.length / DEFAULT_BATCH_SIZE));
    expect(embedder.maxRunning).toBeGreaterThan(1);
    expect(embedder.maxRunning).toBeLessThanOrEqual(DEFAULT_IN_FLIGHT);
  });

  it('gives an index that filters on file fields the fields extraction found, before the file is indexed', async () => {
    const told: { fileId: string; fields: FileFields; status: string | undefined }[] = [];
    const reloadNow = (fileId: string) => files.get(collectionId, fileId);
    class FieldsIndex extends SqliteVectorIndex {
      override get filtersFileFields(): boolean {
        return true;
      }
      override async setFileFields(_collectionId: string, fileId: string, fields: FileFields): Promise<void> {
        told.push({ fileId, fields, status: (await reloadNow(fileId))?.status });
      }
    }
    const fieldsIndex = new FieldsIndex(db);
    await fieldsIndex.init();
    const fieldsService = new IngestionService(
      files,
      blobs,
      collections,
      fieldsIndex,
      embedder,
      extractor,
      fetcher,
      pino({ level: 'silent' }),
      new Metrics(),
    );
    const pdf = makeLargeTextPdf(3);
    const file = await storedFile({ bytes: pdf });
    await files.update(file.id, { metadata: { year: 2024 } });
    await fieldsService.ingest(job(file));
    expect((await reload(file)).status).toBe('indexed');
    expect(told).toEqual([
      {
        fileId: file.id,
        fields: expect.objectContaining({ type: 'application/pdf', size: pdf.length, pages: 3, metadata: { year: 2024 } }),
        // Not yet searchable when its units get their fields.
        status: 'processing',
      },
    ]);
  });

  it('refuses a name that resolves to a private address, recording why', async () => {
    const file = await storedFile({ url: 'http://intranet.test/report.pdf' });
    await service.ingest(job(file));
    expect(await reload(file)).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^Refused to fetch from intranet\.test: it resolves to 10\.0\.0\.5/),
    });
    expect(embedder.calls).toBe(0);
  });

  it('refuses to mix embedding models in one collection, before extracting anything', async () => {
    await collections.claimEmbedding(collectionId, 'other-model', 1536);
    const file = await storedFile({ bytes: makeLargeTextPdf(2) });
    await service.ingest(job(file));
    const failed = await reload(file);
    expect(failed.status).toBe('error');
    expect(failed.error).toMatch(/holds vectors of other-model \(1536 dimensions\).*fake-16 \(16 dimensions\)/);
    expect(embedder.calls).toBe(0);
  });

  it('stops and cleans up when the file is deleted while it is being indexed', async () => {
    const file = await storedFile({ bytes: makeLargeTextPdf(60) });
    embedder.onCall = async (call) => {
      if (call === 2) await files.delete(file.id);
    };
    await service.ingest(job(file));
    expect(embedder.calls).toBeGreaterThanOrEqual(2);
    expect(await files.get(collectionId, file.id)).toBeNull();
    expect(await files.listPassages(file.id, -1, 10)).toEqual([]);
    expect(await index.countUnits(collectionId)).toBe(0);
    expect(await blobs.get(originalBlobKey(file))).toBeNull();
  });

  it('hands a passing failure back to the queue while tries remain, then records it', async () => {
    const file = await storedFile({ bytes: makeLargeTextPdf(3) });
    embedder.onCall = () => {
      throw new AppError(ErrorCode.EMBEDDING_FAILED, 'embedding service answered 503', { retryable: true });
    };
    await expect(service.ingest(job(file, { attempt: 1 }))).rejects.toThrow('embedding service answered 503');
    expect(await reload(file)).toMatchObject({ status: 'pending', error: null });
    expect(await files.listPassages(file.id, -1, 10)).toEqual([]);

    await service.ingest(job(file, { attempt: 3 }));
    expect(await reload(file)).toMatchObject({ status: 'error', error: 'embedding service answered 503' });
    expect(await index.countUnits(collectionId)).toBe(0);
  });

  it('leaves the file processing when the queue shuts down, and finishes it on the next run', async () => {
    const file = await storedFile({ bytes: makeLargeTextPdf(60) });
    const shutdown = new AbortController();
    embedder.onCall = (call) => {
      if (call === 2) shutdown.abort(new AppError(ErrorCode.UNAVAILABLE, 'the job queue is shutting down', { retryable: true }));
    };
    await expect(service.ingest(job(file, { signal: shutdown.signal }))).rejects.toThrow(/shutting down/);
    expect((await reload(file)).status).toBe('processing');

    embedder.onCall = undefined;
    await service.ingest(job(file));
    const done = await reload(file);
    expect(done.status).toBe('indexed');
    // The interrupted attempt left nothing twice.
    expect(await files.listPassages(file.id, -1, 10_000)).toHaveLength(done.chunkCount);
    expect(new Set((await files.listPassages(file.id, -1, 10_000)).map((p) => p.index)).size).toBe(done.chunkCount);
  });

  it('hides internal failures behind a plain message', async () => {
    const file = await storedFile({ bytes: makeLargeTextPdf(2) });
    embedder.onCall = () => {
      throw new TypeError('cannot read properties of undefined');
    };
    await service.ingest(job(file, { attempt: 3 }));
    expect(await reload(file)).toMatchObject({ status: 'error', error: 'internal error while indexing the file' });
  });

  it('does nothing for a file already indexed or gone', async () => {
    const file = await storedFile({ bytes: makeLargeTextPdf(1) });
    await service.ingest(job(file));
    const calls = embedder.calls;
    await service.ingest(job(file));
    expect(embedder.calls).toBe(calls);
    await expect(service.ingest(job({ ...file, id: newId('fle') }))).resolves.toBeUndefined();
  });

  it("leaves a file pending with the reason when the service's own storage fails, on the last try too", async () => {
    const file = await storedFile({ bytes: makeLargeTextPdf(3) });
    const insertPassages = files.insertPassages.bind(files);
    files.insertPassages = async () => {
      throw Object.assign(new Error('database is locked'), { name: 'SqliteError', code: 'SQLITE_BUSY' });
    };
    try {
      await expect(service.ingest(job(file, { attempt: 3 }))).resolves.toBeUndefined();
    } finally {
      files.insertPassages = insertPassages;
    }
    const waiting = await reload(file);
    expect(waiting).toMatchObject({ status: 'pending', progress: { stage: 'queued' } });
    expect(waiting.error).toMatch(/SQLITE_BUSY.*tried again/);
    expect(await index.countUnits(collectionId)).toBe(0);

    await service.ingest(job(file, { attempt: 1 }));
    expect(await reload(file)).toMatchObject({ status: 'indexed', error: null, progress: null });
  });

  it('names what to free when the disk is full, and keeps the file pending', async () => {
    const file = await storedFile({ bytes: makeLargeTextPdf(2) });
    embedder.onCall = () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    const diskFull = new IngestionService(
      files,
      blobs,
      collections,
      index,
      embedder,
      extractor,
      fetcher,
      pino({ level: 'silent' }),
      new Metrics(),
      {
        largeBytes: Number.POSITIVE_INFINITY,
        largePages: Number.POSITIVE_INFINITY,
        largeExtractionTimeoutMs: 60_000,
        dataDir: '/var/lib/service',
      },
    );
    await diskFull.ingest(job(file, { attempt: 3 }));
    expect(await reload(file)).toMatchObject({
      status: 'pending',
      error: expect.stringMatching(/DATA_DIR \(\/var\/lib\/service\) is full/),
    });
  });

  it('moves a PDF of more pages than the standard lane takes to the large lane, which indexes it reporting progress', async () => {
    const queue = new RecordingQueue();
    const options = { largeBytes: 10_000_000, largePages: 5, largeExtractionTimeoutMs: 60_000 };
    const laned = new IngestionService(
      files,
      blobs,
      collections,
      index,
      embedder,
      extractor,
      fetcher,
      pino({ level: 'silent' }),
      new Metrics(),
      options,
      undefined,
      queue,
    );
    const file = await storedFile({ bytes: makeLargeTextPdf(8) });
    await laned.ingest(job(file));
    expect(await reload(file)).toMatchObject({ status: 'pending', lane: 'large', progress: { stage: 'queued' } });
    expect(queue.enqueued).toEqual([{ name: 'file.ingest.large', data: { collectionId, fileId: file.id }, jobId: file.id }]);
    expect(embedder.calls).toBe(0);

    const seen: unknown[] = [];
    const update = files.update.bind(files);
    files.update = async (id, change) => {
      if (change.progress) seen.push(change.progress);
      return update(id, change);
    };
    try {
      await laned.ingestLarge(job(file, { name: 'file.ingest.large' }));
    } finally {
      files.update = update;
    }
    expect(await reload(file)).toMatchObject({ status: 'indexed', lane: 'large', progress: null });
    expect(seen).toContainEqual({ stage: 'extracting', done: 0, total: 0 });
    expect(seen).toContainEqual({ stage: 'embedding', done: 0, total: 8 });
    expect(seen[seen.length - 1]).toEqual({ stage: 'indexing', done: 8, total: 8 });
  });
});
