/*
 * Shared set-up of the ingestion benchmarks: the real pipeline (SQLite stores and sqlite-vec in a
 * temporary DATA_DIR, the local embedder, the extraction pool, SafeFetch) wired by hand, without
 * HTTP or the queue, so a figure measures ingestion and nothing around it.
 */
import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessPolicy } from '../../src/auth/access-policy.service';
import { newId } from '../../src/common/ids';
import { SafeFetch } from '../../src/common/safe-fetch';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { createReranker } from '../../src/embeddings/embeddings.module';
import { LocalEmbedder } from '../../src/embeddings/local/local-embedder.adapter';
import { UnavailableCredentials } from '../../src/engine/node-credentials.port';
import { ExtractorPool } from '../../src/ingestion/extractors/extractor-pool';
import { IngestionService } from '../../src/ingestion/ingestion.service';
import { Metrics } from '../../src/metrics/metrics.service';
import { SqliteVectorIndex } from '../../src/search-index/embedded/sqlite-vector-index.adapter';
import { SearchService } from '../../src/collections/search.service';
import { FilesystemBlobStore } from '../../src/storage/embedded/filesystem-blob-store.adapter';
import { SqliteCollectionStore } from '../../src/storage/embedded/sqlite-collection-store.adapter';
import { openSqliteDatabase } from '../../src/storage/embedded/sqlite-database';
import { SqliteFileStore } from '../../src/storage/embedded/sqlite-file-store.adapter';
import { SqliteMembershipStore } from '../../src/storage/embedded/sqlite-membership-store.adapter';
import { newPendingFile, StoredFile } from '../../src/domain/file.model';
import { originalBlobKey } from '../../src/domain/file-store.port';
import pino from 'pino';

export const OWNER = { userId: 'usr_bench', keyId: null, isAdmin: false };

export type Pipeline = Awaited<ReturnType<typeof openPipeline>>;

/** The pipeline as IngestionModule builds it, with the configured EMBEDDING_THREADS. */
export async function openPipeline(env: Record<string, string> = {}) {
  Logger.overrideLogger(['error']);
  const dataDir = mkdtempSync(join(tmpdir(), 'wcs-bench-'));
  const config: AppConfig = loadConfig({ ...process.env, DATA_DIR: dataDir, ...env });
  const db = openSqliteDatabase(config.dataDir);
  const files = new SqliteFileStore(db);
  const blobs = new FilesystemBlobStore(join(config.dataDir, 'blobs'));
  const collections = new SqliteCollectionStore(db);
  const index = new SqliteVectorIndex(db);
  await index.init();
  const embedder = new LocalEmbedder({ threads: config.EMBEDDING_THREADS });
  const extractor = new ExtractorPool({ threads: Math.max(1, Math.floor(cpus().length / 2)), timeoutMs: 10 * 60 * 1000 });
  const fetcher = SafeFetch.fromConfig(config);
  const ingestion = new IngestionService(
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
  const reranker = createReranker(config, fetcher);
  const search = new SearchService(
    new AccessPolicy(new SqliteMembershipStore(db)),
    collections,
    files,
    index,
    embedder,
    new Metrics(),
    reranker,
    new UnavailableCredentials(),
    config,
  );
  return {
    config,
    db,
    files,
    blobs,
    collections,
    index,
    embedder,
    extractor,
    ingestion,
    search,
    async createCollection(): Promise<string> {
      const id = newId('col');
      const now = new Date();
      await collections.create({
        id,
        name: 'bench',
        ownerId: OWNER.userId,
        createdAt: now,
        updatedAt: now,
        embeddingModel: null,
        embeddingDimension: null,
      });
      return id;
    },
    /** A pending file whose bytes are already in the blob store (an upload), or to download from `url`. */
    async addFile(collectionId: string, name: string, source: { bytes: Buffer } | { url: string }): Promise<StoredFile> {
      const file = newPendingFile(collectionId, name, source, 'application/octet-stream');
      if ('bytes' in source) await blobs.put(originalBlobKey(file), source.bytes);
      await files.create(file);
      return file;
    },
    /** Runs the `file.ingest` job for the file and returns its final record. */
    async ingest(file: StoredFile): Promise<StoredFile> {
      await ingestion.ingest({
        id: file.id,
        name: 'file.ingest',
        data: { collectionId: file.collectionId, fileId: file.id },
        attempt: 1,
        maxAttempts: 1,
        signal: new AbortController().signal,
      });
      const done = (await files.get(file.collectionId, file.id))!;
      if (done.status !== 'indexed') throw new Error(`ingestion of ${file.name} ended ${done.status}: ${done.error}`);
      return done;
    },
    async close(): Promise<void> {
      // The index's search and reader threads too: left open, they keep the bench's process alive.
      await Promise.all([embedder.close(), extractor.close(), fetcher.close(), reranker.close(), index.close()]);
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Highest resident set size (the whole process: main thread and every worker thread) while `work` runs. */
export async function peakRss<T>(work: () => Promise<T>): Promise<{ result: T; peakBytes: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  try {
    const result = await work();
    return { result, peakBytes: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

export const mb = (bytes: number) => bytes / 2 ** 20;

/** Collects garbage when the process runs with --expose-gc (npm run bench does), so a baseline RSS means something. */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export function reporter(bench: string) {
  const round = (n: number) => Math.round(n * 100) / 100;
  return (metric: string, value: number, unit: string, baseline: number | null, target: number | null = null): void => {
    const ratio = baseline ? round(value / baseline) : null;
    console.log(
      JSON.stringify({ bench, metric, value: round(value), unit, baseline: baseline === null ? null : round(baseline), ratio, target }),
    );
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
