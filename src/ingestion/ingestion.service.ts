import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import { AppError, ErrorCode, isAppError } from '../common/app-error';
import type { AppConfig } from '../config/app-config';
import { isDiskFull, isServiceFault } from '../common/resource-faults';
import { ROOT_LOGGER } from '../common/logger';
import { SafeFetch } from '../common/safe-fetch';
import { withLimitedHeapGrowth } from '../common/heap-growth';
import { Embedder } from '../domain/embedder.port';
import { JobContext, JobQueue } from '../domain/job-queue.port';
import { OnJob } from '../jobs/on-job.decorator';
import { IngestionStage, Metrics } from '../metrics/metrics.service';
import { fileFieldsOf, modelMismatch, VectorIndex } from '../domain/vector-index.port';
import { BlobStore } from '../domain/blob-store.port';
import { CollectionStore } from '../domain/collection-store.port';
import { FileStore, originalBlobKey } from '../domain/file-store.port';
import { FileLane, FileProgress, QUEUED, StoredFile } from '../domain/file.model';
import { detectType } from './detect-type';
import { DocumentIndexer, IndexingTotals } from './document-indexer';
import { CoalescingEmbedder } from './coalescing-embedder';
import { isLaneLimit } from './extractors/extracted-document';
import { ExtractorPool } from './extractors/extractor-pool';
import { ensureIngestion, FILE_INGEST_JOB, FILE_INGEST_LARGE_JOB, FileIngestJob, LaneLimits } from './ingestion.job';

/**
 * Files one process ingests at once: none in the process of `npm start` that serves the API while
 * worker processes run beside it. Chunking, decoding vectors and index writes on its event loop
 * held every request behind them (/health p99 near a second while ingesting); alone, it ingests.
 */
function ingestsHere(config: AppConfig, concurrency: number): number {
  return config.supervisedWorkers > 0 ? 0 : concurrency;
}

/** The file was deleted (or its collection was) while it was being ingested. */
class FileGone extends Error {}

/** The file belongs in the large-file lane: it went back to `pending` there and this job is done with it. */
class MovedToLargeLane extends Error {}

export interface IngestionOptions extends LaneLimits {
  /** The extraction limit of a file in the large lane (the standard lane's is the pool's own). */
  largeExtractionTimeoutMs: number;
  /** Named when the database cannot grow (SQLITE_FULL), as what to free. */
  dataDir?: string;
}

export const INGESTION_OPTIONS = Symbol('INGESTION_OPTIONS');
/** The extraction pool of the large lane, so a 10,000-page parse never holds a small file's. */
export const LARGE_LANE_EXTRACTOR = Symbol('LARGE_LANE_EXTRACTOR');

/** Without options (the benchmarks' hand-wired pipeline) every file stays in the lane it was queued in. */
const NO_LANES: IngestionOptions = {
  largeBytes: Number.POSITIVE_INFINITY,
  largePages: Number.POSITIVE_INFINITY,
  largeExtractionTimeoutMs: 60 * 60 * 1000,
};
/** Progress within a stage is written at most this often; a change of stage at once. */
const PROGRESS_EVERY_MS = 1000;

/** Statuses a job may pick a file up from: `processing` too, because a restart interrupts work in that state. */
const CLAIMABLE = ['pending', 'processing'] as const;

/**
 * The `file.ingest` and `file.ingest.large` jobs: original bytes (uploaded, or downloaded through
 * SafeFetch) -> type detection -> extraction in a worker -> chunk, embed and index as a stream.
 * Each lane has its own concurrency and extraction pool: a file found to be large in the standard
 * lane (bytes after its download, pages in its PDF page tree) moves to the large lane before its
 * long part starts. Every outcome ends in the file record: `indexed` with its counts, `error` with
 * a reason a person can act on, or `pending` again with the reason when the service itself failed
 * (disk full, database unavailable), for the reconciler to try again.
 */
@Injectable()
export class IngestionService {
  private readonly logger: Logger;
  private readonly options: IngestionOptions;
  private readonly largeExtractor: ExtractorPool;
  /** Small files' embedder calls, combined while the embedder is busy. */
  private readonly indexingEmbedder: Embedder;

  constructor(
    private readonly files: FileStore,
    private readonly blobs: BlobStore,
    private readonly collections: CollectionStore,
    private readonly index: VectorIndex,
    private readonly embedder: Embedder,
    private readonly extractor: ExtractorPool,
    /** Its download cap is MAX_FILE_BYTES (SafeFetch.fromConfig). */
    private readonly fetcher: SafeFetch,
    @Inject(ROOT_LOGGER) logger: Logger,
    private readonly metrics: Metrics,
    @Optional() @Inject(INGESTION_OPTIONS) options?: IngestionOptions,
    @Optional() @Inject(LARGE_LANE_EXTRACTOR) largeExtractor?: ExtractorPool,
    /** Where a file moves to the large lane; without it, files stay in their lane. */
    @Optional() private readonly queue?: JobQueue,
  ) {
    this.logger = logger.child({ component: 'ingestion' });
    this.options = options ?? NO_LANES;
    this.largeExtractor = largeExtractor ?? extractor;
    this.indexingEmbedder = new CoalescingEmbedder(embedder);
  }

  @OnJob(FILE_INGEST_JOB, { concurrency: (config) => ingestsHere(config, config.JOB_CONCURRENCY) })
  ingest(job: JobContext<FileIngestJob>): Promise<void> {
    return this.run(job, 'standard');
  }

  @OnJob(FILE_INGEST_LARGE_JOB, { concurrency: (config) => ingestsHere(config, config.INGEST_LARGE_CONCURRENCY) })
  ingestLarge(job: JobContext<FileIngestJob>): Promise<void> {
    return this.run(job, 'large');
  }

  private async run(job: JobContext<FileIngestJob>, lane: FileLane): Promise<void> {
    const { collectionId, fileId } = job.data;
    const found = await this.files.get(collectionId, fileId);
    if (!found || found.status === 'indexed' || found.status === 'error') return;
    const progress = { stage: 'fetching', done: 0, total: found.sourceUrl ? 0 : found.size } satisfies FileProgress;
    if (!(await this.files.transition(fileId, CLAIMABLE, 'processing', { error: null, progress }))) return;
    const file: StoredFile = { ...found, status: 'processing', error: null, progress };
    const started = performance.now();
    try {
      // A file's batches live long enough to be promoted: the heap is kept near its live size meanwhile.
      const totals = await withLimitedHeapGrowth(() => this.process(file, lane, job.signal));
      await this.keepFileFields(collectionId, fileId);
      const finished = await this.files.transition(fileId, ['processing'], 'indexed', {
        chunkCount: totals.passages,
        characterCount: totals.characters,
        progress: null,
      });
      if (!finished) throw new FileGone();
      this.metrics.fileIngested('indexed');
      this.logger.info(
        { fileId, collectionId, lane, passages: totals.passages, vectors: totals.units, ms: Math.round(performance.now() - started) },
        'file indexed',
      );
    } catch (error) {
      if (error instanceof MovedToLargeLane) return;
      await this.handleFailure(file, job, error);
    }
  }

  /**
   * Before the file is `indexed` (searchable), its units get its fields as they stand now (the
   * type, pages and title extraction found; metadata changed meanwhile), for an index that filters on them.
   */
  private async keepFileFields(collectionId: string, fileId: string): Promise<void> {
    if (!this.index.filtersFileFields) return;
    const current = await this.files.get(collectionId, fileId);
    if (!current) throw new FileGone();
    await this.index.setFileFields(collectionId, fileId, fileFieldsOf(current));
  }

  private async process(file: StoredFile, lane: FileLane, signal: AbortSignal): Promise<IndexingTotals> {
    // A file already known to be large (by its size at upload, or an earlier try) leaves at once.
    if (lane === 'standard' && file.lane === 'large') await this.moveToLargeLane(file, 'queued in the large-file lane');
    const { bytes, contentType } = await this.timed('fetch', () => this.originalBytes(file, signal));
    if (lane === 'standard' && bytes.length > this.options.largeBytes) await this.moveToLargeLane(file, `${bytes.length} bytes`);
    const type = detectType(bytes, file.name, contentType ?? file.mime);
    // The size is known even when the type turns out unsupported.
    await this.files.update(file.id, { size: bytes.length, mime: type.mime, progress: { stage: 'extracting', done: 0, total: 0 } });
    await this.refuseOtherModel(file.collectionId);
    const extractor = lane === 'large' ? this.largeExtractor : this.extractor;
    const progress = this.progressWriter(file.id);
    // Page counts may arrive after the extraction's result: none may overwrite a later stage.
    let extracting = true;
    const limits =
      lane === 'large'
        ? { timeoutMs: this.options.largeExtractionTimeoutMs }
        : { maxPages: this.queue && Number.isFinite(this.options.largePages) ? this.options.largePages : undefined };
    // On shutdown the pool cancels the parse; the job must then fail with the queue's own reason
    // so that it is handed back rather than recorded as an error.
    const onPages = (done: number, total: number) => extracting && progress.report({ stage: 'extracting', done, total });
    const doc = await this.timed('extract', () =>
      extractor
        .extract(bytes, type, { signal, onPages, ...limits })
        .finally(() => (extracting = false))
        .catch(async (error: unknown) => {
          if (signal.aborted) throw signal.reason;
          if (isLaneLimit(error)) await this.moveToLargeLane(file, `${error.details.laneLimit.pages} pages`);
          throw error;
        }),
    );
    // Leftovers of an attempt a restart interrupted.
    await this.removeIndexedContent(file);
    // Read before indexing, which releases the segments as it goes.
    const info = doc.info ?? {};
    await this.files.update(file.id, { pages: info.pages ?? null, title: info.title ?? null, author: info.author ?? null });
    const target = { collectionId: file.collectionId, fileId: file.id };
    const indexer = new DocumentIndexer(target, this.files, this.index, this.indexingEmbedder, {
      signal,
      beforeFirstWrite: (dimension) => this.claimEmbedding(file.collectionId, dimension),
      afterWrite: () => this.assertStillThere(file),
      onProgress: progress.report,
    });
    progress.report({ stage: 'embedding', done: 0, total: doc.segments.length });
    const totals = await indexer.run(doc);
    await progress.flushed();
    for (const stage of ['chunk', 'embed', 'index'] as const) this.metrics.ingestionStage(stage, indexer.timings[stage] / 1000);
    if (totals.passages === 0) throw new AppError(ErrorCode.EXTRACTION_FAILED, 'document has no text');
    return totals;
  }

  /**
   * Back to `pending` in the large lane, then queued there (that order: the large lane's job must
   * not find the file still `processing` under this one). Throws MovedToLargeLane to end this job.
   */
  private async moveToLargeLane(file: StoredFile, why: string): Promise<never> {
    if (!this.queue) throw new AppError(ErrorCode.INTERNAL, 'no queue to move the file to the large-file lane');
    if (!(await this.files.transition(file.id, ['processing'], 'pending', { lane: 'large', progress: QUEUED }))) throw new FileGone();
    await ensureIngestion(this.queue, { ...file, lane: 'large' });
    this.logger.info({ fileId: file.id, collectionId: file.collectionId, why }, 'file moved to the large-file lane');
    throw new MovedToLargeLane();
  }

  /**
   * Writes the indexer's progress to the file record: a new stage at once, counts within a stage
   * at most every PROGRESS_EVERY_MS, one write at a time. A failed write is only logged: progress
   * is a hint, and the next write or the outcome corrects it.
   */
  private progressWriter(fileId: string) {
    let written: FileProgress | undefined;
    let lastWriteAt = 0;
    let writing: Promise<void> = Promise.resolve();
    const write = (progress: FileProgress) => {
      written = progress;
      lastWriteAt = performance.now();
      writing = writing
        .then(() => this.files.update(fileId, { progress }))
        .then(
          () => undefined,
          (error: unknown) => this.logger.warn({ fileId, err: error }, 'could not record the progress of the file'),
        );
    };
    return {
      report: (progress: FileProgress) => {
        if (written?.stage !== progress.stage || performance.now() - lastWriteAt >= PROGRESS_EVERY_MS) write(progress);
      },
      flushed: () => writing,
    };
  }

  /** Records how long a stage took when it completes; a failed stage is counted by the file's outcome instead. */
  private async timed<T>(stage: IngestionStage, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work();
    this.metrics.ingestionStage(stage, (performance.now() - started) / 1000);
    return result;
  }

  private async originalBytes(file: StoredFile, signal: AbortSignal): Promise<{ bytes: Buffer; contentType?: string }> {
    // A file given by URL is downloaded once; a retry works from the stored copy.
    const stored = await this.blobs.get(originalBlobKey(file));
    if (stored) return { bytes: stored };
    if (!file.sourceUrl) throw new AppError(ErrorCode.INTERNAL, 'the uploaded bytes of this file are missing');
    const response = await this.fetcher.fetch(file.sourceUrl, { signal });
    if (response.status < 200 || response.status >= 300) {
      throw new AppError(ErrorCode.FETCH_FAILED, `download failed: ${new URL(response.url).host} answered HTTP ${response.status}`, {
        retryable: response.status >= 500 || response.status === 429 || response.status === 408,
        details: { status: response.status },
      });
    }
    await this.blobs.put(originalBlobKey(file), response.body);
    return { bytes: response.body, contentType: response.headers['content-type'] };
  }

  /** Fails before extracting and embedding a whole file whose vectors the collection would refuse. */
  private async refuseOtherModel(collectionId: string): Promise<void> {
    const collection = await this.collections.get(collectionId);
    if (!collection) throw new FileGone();
    if (collection.embeddingModel !== null && collection.embeddingModel !== this.embedder.model) {
      throw modelMismatch(collectionId, { model: collection.embeddingModel, dimension: collection.embeddingDimension }, this.embedder);
    }
  }

  private async claimEmbedding(collectionId: string, dimension: number): Promise<void> {
    const claimed = await this.collections.claimEmbedding(collectionId, this.embedder.model, dimension);
    if (claimed.model !== this.embedder.model || claimed.dimension !== dimension) {
      throw modelMismatch(collectionId, claimed, { model: this.embedder.model, dimension });
    }
  }

  private async assertStillThere(file: StoredFile): Promise<void> {
    if (!(await this.files.get(file.collectionId, file.id))) throw new FileGone();
  }

  private async handleFailure(file: StoredFile, job: JobContext<FileIngestJob>, error: unknown): Promise<void> {
    // Deleted meanwhile: whatever failed (a passage insert refused by its foreign key, say) is moot.
    if (error instanceof FileGone || !(await this.files.get(file.collectionId, file.id).catch(() => file))) {
      this.metrics.fileIngested('deleted');
      await this.removeIndexedContent(file, { blob: true });
      return;
    }
    // The queue is shutting down (or another worker took the job over): the file stays
    // `processing` and the job runs again.
    if (job.signal.aborted) {
      this.metrics.fileIngested('interrupted');
      throw error;
    }
    if (isServiceFault(error)) {
      await this.waitForResources(file, error);
      return;
    }
    const reason = readableError(error);
    if (reason.code === ErrorCode.INTERNAL) {
      this.logger.error({ fileId: file.id, err: error }, 'file ingestion failed unexpectedly');
    }
    await this.removeIndexedContent(file);
    if (reason.retryable && job.attempt < job.maxAttempts) {
      await this.files.transition(file.id, ['processing'], 'pending');
      this.metrics.fileIngested('retrying');
      this.logger.warn(
        { fileId: file.id, attempt: job.attempt, maxAttempts: job.maxAttempts, reason: reason.message },
        'file ingestion attempt failed; will retry',
      );
      throw reason;
    }
    const recorded = await this.files.transition(file.id, ['processing'], 'error', { error: reason.message });
    this.metrics.fileIngested(recorded ? 'failed' : 'deleted');
    if (!recorded) await this.removeIndexedContent(file, { blob: true });
    else this.logger.warn({ fileId: file.id, reason: reason.message }, 'file ingestion failed');
  }

  /**
   * The service failed, not the file: it goes back to `pending` with the reason, and this job ends;
   * the reconciler queues it again on its next pass, and again, until the resources are back. If
   * even that write fails (the database is what failed), the file stays `processing` without a
   * live job, which the reconciler picks up the same way.
   */
  private async waitForResources(file: StoredFile, error: unknown): Promise<void> {
    const reason = this.serviceFaultReason(error);
    await this.removeIndexedContent(file);
    const waiting = await this.files
      .transition(file.id, ['processing'], 'pending', { error: reason, progress: QUEUED })
      .catch((cause: unknown) => {
        this.logger.warn({ fileId: file.id, err: cause }, 'could not record why the file waits');
        return false;
      });
    this.metrics.fileIngested('retrying');
    this.logger.warn(
      { fileId: file.id, recorded: waiting, reason, err: error },
      "file ingestion failed for the service's own reasons; it will be tried again",
    );
  }

  private serviceFaultReason(error: unknown): string {
    const retry = 'the file is tried again automatically';
    if (isAppError(error) && error.code !== ErrorCode.INTERNAL) return `${error.message} (${retry})`;
    if (isDiskFull(error)) {
      const where = this.options.dataDir ? `the disk holding DATA_DIR (${this.options.dataDir})` : 'the disk of the database';
      return `${where} is full; free space there (${retry})`;
    }
    const code = (error as { code?: unknown } | null)?.code;
    const name = error instanceof Error ? error.name : 'error';
    return `the service's storage failed (${typeof code === 'string' ? code : name}); ${retry} once it answers`;
  }

  /** Passages and vectors of the file, and with `blob` its original bytes. Best effort: logs what it could not remove. */
  private async removeIndexedContent(file: StoredFile, { blob = false } = {}): Promise<void> {
    const steps: Array<[string, () => Promise<void>]> = [
      ['vectors', () => this.index.deleteByFile(file.collectionId, file.id)],
      ['passages', () => this.files.deletePassages(file.id)],
    ];
    if (blob) steps.push(['original', () => this.blobs.delete(originalBlobKey(file))]);
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (error) {
        this.logger.error({ fileId: file.id, what, err: error }, 'could not remove indexed content of the file');
      }
    }
  }
}

/** What the file record says went wrong: our own errors as they are, anything else without internals. */
function readableError(error: unknown): AppError {
  if (isAppError(error)) return error;
  return new AppError(ErrorCode.INTERNAL, 'internal error while indexing the file', { cause: error, retryable: false });
}
