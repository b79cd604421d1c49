import { Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { StorageConnections } from '../storage/storage-connections';
import { StorageModule } from '../storage/storage.module';
import { SqliteVectorIndex } from './embedded/sqlite-vector-index.adapter';
import { VectorIndex } from '../domain/vector-index.port';

/**
 * Elasticsearch when ELASTICSEARCH_URL is set, else sqlite-vec + FTS5 in the service's SQLite file.
 * Its client is loaded only then: imported with the module, it cost every process of the embedded
 * default about 15 MiB of resident memory (7 MiB of heap) it never used.
 */
export async function createVectorIndex(config: AppConfig, connections: StorageConnections): Promise<VectorIndex> {
  if (config.ELASTICSEARCH_URL) {
    const { ElasticsearchVectorIndex } = await import('./elasticsearch/elasticsearch-vector-index.adapter');
    return ElasticsearchVectorIndex.fromConfig(config);
  }
  // Worker processes do not answer the API's searches: they leave what they ingest to be loaded by a search.
  return new SqliteVectorIndex(connections.sqlite, { answersSearches: config.APP_ROLE !== 'worker' });
}

/** The VectorIndex port and its adapter; collection search (collections/) and ingestion use it. */
@Module({
  imports: [StorageModule],
  providers: [{ provide: VectorIndex, inject: [AppConfig, StorageConnections], useFactory: createVectorIndex }],
  exports: [VectorIndex],
})
export class SearchIndexModule implements OnModuleInit, OnApplicationShutdown {
  constructor(private readonly index: VectorIndex) {}

  /** The index exists (tables, or the mapping) before anything writes to or searches it. */
  async onModuleInit(): Promise<void> {
    await this.index.init();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.index.close();
  }
}
