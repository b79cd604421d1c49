import { Module, OnApplicationShutdown } from '@nestjs/common';
import { cpus } from 'node:os';
import { SafeFetch } from '../common/safe-fetch';
import { AppConfig } from '../config/app-config';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { SearchModule } from '../search/search.module';
import { ExtractorPool } from './extractors/extractor-pool';
import { IngestionProcessor } from './ingestion.processor';
import { IngestionService } from './ingestion.service';

/**
 * Extraction is a short step next to embedding, which gets every core; half the cores are
 * enough for it and leave the embedder room.
 */
const EXTRACTION_THREADS = Math.max(1, Math.floor(cpus().length / 2));
/** Generous: a 100 MB PDF takes a while to parse on a busy machine, and a hung parser still ends. */
const EXTRACTION_TIMEOUT_MS = 5 * 60 * 1000;

@Module({
  imports: [EmbeddingsModule, SearchModule],
  providers: [
    { provide: ExtractorPool, useFactory: () => new ExtractorPool({ threads: EXTRACTION_THREADS, timeoutMs: EXTRACTION_TIMEOUT_MS }) },
    { provide: SafeFetch, inject: [AppConfig], useFactory: (config: AppConfig) => SafeFetch.fromConfig(config) },
    IngestionService,
    IngestionProcessor,
  ],
  exports: [IngestionService],
})
export class IngestionModule implements OnApplicationShutdown {
  constructor(
    private readonly extractor: ExtractorPool,
    private readonly fetcher: SafeFetch,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.extractor.close(), this.fetcher.close()]);
  }
}
