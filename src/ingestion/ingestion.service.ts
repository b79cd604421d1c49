import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import { AppError, ErrorCode, isAppError } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { SafeFetch } from '../common/safe-fetch';
import { Embedder } from '../embeddings/embedder.port';
import { JobContext } from '../jobs/job-queue.port';
import { OnJob } from '../jobs/on-job.decorator';
import { IngestionStage, Metrics } from '../metrics/metrics.service';
import { modelMismatch, VectorIndex } from '../search/vector-index.port';
import { BlobStore } from '../storage/blob-store.port';
import { CollectionStore } from '../storage/collection-store.port';
import { FileStore, originalBlobKey } from '../storage/file-store.port';
import { StoredFile } from '../collections/file.model';
import { detectType } from './detect-type';
import { DocumentIndexer, IndexingTotals } from './document-indexer';
import { ExtractorPool } from './extractors/extractor-pool';
import { FILE_INGEST_JOB, FileIngestJob } from './ingestion.job';

/** The file was deleted (or its collection was) while it was being ingested. */
class FileGone extends Error {}

/** Statuses a job may pick a file up from: `processing` too, because a restart interrupts work in that state. */
const CLAIMABLE = ['pending', 'processing'] as const;

/**
 * The `file.ingest` job: original bytes (uploaded, or downloaded through SafeFetch) -> type
 * detection -> extraction in a worker -> chunk, embed and index as a stream. Every outcome ends
 * in the file record: `indexed` with its counts, or `error` with a reason a person can act on.
 */
@Injectable()
export class IngestionService {
  private readonly logger: Logger;

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
  ) {
    this.logger = logger.child({ component: 'ingestion' });
  }

  @OnJob(FILE_INGEST_JOB)
  async ingest(job: JobContext<FileIngestJob>): Promise<void> {
    const { collectionId, fileId } = job.data;
    const file = await this.files.get(collectionId, fileId);
    if (!file || file.status === 'indexed' || file.status === 'error') return;
    if (!(await this.files.transition(fileId, CLAIMABLE, 'processing', { error: null }))) return;
    const started = performance.now();
    try {
      const totals = await this.process(file, job.signal);
      const finished = await this.files.transition(fileId, ['processing'], 'indexed', {
        chunkCount: totals.passages,
        characterCount: totals.characters,
      });
      if (!finished) throw new FileGone();
      this.metrics.fileIngested('indexed');
      this.logger.info(
        { fileId, collectionId, passages: totals.passages, vectors: totals.units, ms: Math.round(performance.now() - started) },
        'file indexed',
      );
    } catch (error) {
      await this.handleFailure(file, job, error);
    }
  }

  private async process(file: StoredFile, signal: AbortSignal): Promise<IndexingTotals> {
    const { bytes, contentType } = await this.timed('fetch', () => this.originalBytes(file, signal));
    // The size is known even when the type turns out unsupported.
    await this.files.update(file.id, { size: bytes.length });
    const type = detectType(bytes, file.name, contentType ?? file.mime);
    await this.files.update(file.id, { mime: type.mime });
    await this.refuseOtherModel(file.collectionId);
    // On shutdown the pool cancels the parse; the job must then fail with the queue's own reason
    // so that it is handed back rather than recorded as an error.
    const doc = await this.timed('extract', () =>
      this.extractor.extract(bytes, type, { signal }).catch((error: unknown) => {
        throw signal.aborted ? signal.reason : error;
      }),
    );
    // Leftovers of an attempt a restart interrupted.
    await this.removeIndexedContent(file);
    const target = { collectionId: file.collectionId, fileId: file.id };
    const indexer = new DocumentIndexer(target, this.files, this.index, this.embedder, {
      signal,
      beforeFirstWrite: (dimension) => this.claimEmbedding(file.collectionId, dimension),
      afterWrite: () => this.assertStillThere(file),
    });
    const totals = await indexer.run(doc);
    for (const stage of ['chunk', 'embed', 'index'] as const) this.metrics.ingestionStage(stage, indexer.timings[stage] / 1000);
    if (totals.passages === 0) throw new AppError(ErrorCode.EXTRACTION_FAILED, 'document has no text');
    return totals;
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
    const reason = readableError(error);
    if (reason.code === ErrorCode.INTERNAL) {
      this.logger.error({ fileId: file.id, err: error }, 'file ingestion failed unexpectedly');
    }
    await this.removeIndexedContent(file);
    if (reason.retryable && job.attempt < job.maxAttempts) {
      await this.files.transition(file.id, ['processing'], 'pending');
      this.metrics.fileIngested('retrying');
      this.logger.warn({ fileId: file.id, attempt: job.attempt, maxAttempts: job.maxAttempts, reason: reason.message }, 'file ingestion attempt failed; will retry');
      throw reason;
    }
    const recorded = await this.files.transition(file.id, ['processing'], 'error', { error: reason.message });
    this.metrics.fileIngested(recorded ? 'failed' : 'deleted');
    if (!recorded) await this.removeIndexedContent(file, { blob: true });
    else this.logger.warn({ fileId: file.id, reason: reason.message }, 'file ingestion failed');
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
