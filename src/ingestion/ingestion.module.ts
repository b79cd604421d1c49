import { DynamicModule, Inject, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { cpus } from 'node:os';
import { OutboundHttpModule } from '../common/outbound-http.module';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { JobsModule } from '../jobs/jobs.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ContentStorageModule } from '../storage/content-storage.module';
import { StorageModule } from '../storage/storage.module';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { SearchIndexModule } from '../search-index/search-index.module';
import { ExtractorPool } from './extractors/extractor-pool';
import { DEFAULT_FILES_RECONCILER_OPTIONS, FILES_RECONCILER_OPTIONS, FilesReconciler } from './files-reconciler.service';
import { INGESTION_OPTIONS, IngestionOptions, IngestionService, LARGE_LANE_EXTRACTOR } from './ingestion.service';

/**
 * Extraction is a short step next to embedding, which gets every core; half the cores are
 * enough for it and leave the embedder room.
 */
const EXTRACTION_THREADS = Math.max(1, Math.floor(cpus().length / 2));
/** Generous: a 20 MB file takes a while to parse on a busy machine, and a hung parser still ends. */
const EXTRACTION_TIMEOUT_MS = 5 * 60 * 1000;
/** The large lane's files are up to MAX_FILE_BYTES or thousands of pages: a 10,000-page PDF must finish. */
const LARGE_EXTRACTION_TIMEOUT_MS = 60 * 60 * 1000;

/**
 * The `file.ingest` and `file.ingest.large` jobs (IngestionService) and their reconciler, in
 * processes that run workers: an api process builds none of it. Each lane has its own extraction
 * pool, so a long parse in the large lane never holds a small file's.
 */
@Module({})
export class IngestionModule implements OnApplicationShutdown {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, IngestionModule, () => IngestionModule.build(config));
  }

  private static build(config: AppConfig): DynamicModule {
    const workers = config.runsWorkers
      ? [
          {
            provide: ExtractorPool,
            useFactory: () => new ExtractorPool({ threads: EXTRACTION_THREADS, timeoutMs: EXTRACTION_TIMEOUT_MS }),
          },
          {
            provide: LARGE_LANE_EXTRACTOR,
            useFactory: () =>
              new ExtractorPool({
                threads: Math.max(1, Math.min(EXTRACTION_THREADS, config.INGEST_LARGE_CONCURRENCY)),
                timeoutMs: LARGE_EXTRACTION_TIMEOUT_MS,
              }),
          },
          {
            provide: INGESTION_OPTIONS,
            useValue: {
              largeBytes: config.INGEST_LARGE_BYTES,
              largePages: config.INGEST_LARGE_PAGES,
              largeExtractionTimeoutMs: LARGE_EXTRACTION_TIMEOUT_MS,
              dataDir: config.MONGODB_URI ? undefined : config.dataDir,
            } satisfies IngestionOptions,
          },
          IngestionService,
          FilesReconciler,
          {
            provide: FILES_RECONCILER_OPTIONS,
            useValue: {
              ...DEFAULT_FILES_RECONCILER_OPTIONS,
              intervalMs: Math.min(DEFAULT_FILES_RECONCILER_OPTIONS.intervalMs, config.JOB_LEASE_MS),
            },
          },
        ]
      : [];
    return {
      module: IngestionModule,
      imports: [
        StorageModule,
        ContentStorageModule,
        SearchIndexModule,
        EmbeddingsModule,
        OutboundHttpModule,
        JobsModule.forRoot(config),
        MetricsModule.forRoot(config),
      ],
      providers: workers,
    };
  }

  constructor(
    @Optional() private readonly extractor?: ExtractorPool,
    @Optional() @Inject(LARGE_LANE_EXTRACTOR) private readonly largeExtractor?: ExtractorPool,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.extractor?.close(), this.largeExtractor?.close()]);
  }
}
