import { DynamicModule, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { cpus } from 'node:os';
import { AppConfig } from '../config/app-config';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { SearchModule } from '../search/search.module';
import { ExtractorPool } from './extractors/extractor-pool';
import { DEFAULT_FILES_RECONCILER_OPTIONS, FILES_RECONCILER_OPTIONS, FilesReconciler } from './files-reconciler.service';
import { IngestionService } from './ingestion.service';

/**
 * Extraction is a short step next to embedding, which gets every core; half the cores are
 * enough for it and leave the embedder room.
 */
const EXTRACTION_THREADS = Math.max(1, Math.floor(cpus().length / 2));
/** Generous: a 100 MB PDF takes a while to parse on a busy machine, and a hung parser still ends. */
const EXTRACTION_TIMEOUT_MS = 5 * 60 * 1000;

/** The `file.ingest` job (IngestionService.ingest) and its reconciler, in processes that run workers: an api process builds none of it. */
@Module({})
export class IngestionModule implements OnApplicationShutdown {
  static forRoot(config: AppConfig): DynamicModule {
    const workers = config.runsWorkers
      ? [
          { provide: ExtractorPool, useFactory: () => new ExtractorPool({ threads: EXTRACTION_THREADS, timeoutMs: EXTRACTION_TIMEOUT_MS }) },
          IngestionService,
          FilesReconciler,
          {
            provide: FILES_RECONCILER_OPTIONS,
            useValue: { ...DEFAULT_FILES_RECONCILER_OPTIONS, intervalMs: Math.min(DEFAULT_FILES_RECONCILER_OPTIONS.intervalMs, config.JOB_LEASE_MS) },
          },
        ]
      : [];
    return {
      module: IngestionModule,
      imports: [EmbeddingsModule, SearchModule],
      providers: workers,
    };
  }

  constructor(@Optional() private readonly extractor?: ExtractorPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.extractor?.close();
  }
}
