import { Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { ReadinessRegistry } from '../health/readiness.registry';
import { StorageConnections } from '../storage/storage-connections';
import { ElasticsearchVectorIndex } from './elasticsearch/elasticsearch-vector-index.adapter';
import { SqliteVectorIndex } from './embedded/sqlite-vector-index.adapter';
import { SearchController } from './search.controller';
import { SearchService } from './search.service';
import { VectorIndex } from './vector-index.port';

/** Elasticsearch when ELASTICSEARCH_URL is set, else sqlite-vec + FTS5 in the service's SQLite file. */
export function createVectorIndex(config: AppConfig, connections: StorageConnections): VectorIndex {
  return config.ELASTICSEARCH_URL ? ElasticsearchVectorIndex.fromConfig(config) : new SqliteVectorIndex(connections.sqlite);
}

@Module({
  imports: [EmbeddingsModule],
  controllers: [SearchController],
  providers: [{ provide: VectorIndex, inject: [AppConfig, StorageConnections], useFactory: createVectorIndex }, SearchService],
  exports: [VectorIndex, SearchService],
})
export class SearchModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly index: VectorIndex,
    private readonly readiness: ReadinessRegistry,
  ) {}

  /** The index exists (tables, or the mapping) before anything writes to or searches it. */
  async onModuleInit(): Promise<void> {
    await this.index.init();
    this.readiness.register({ name: 'index', check: () => this.index.ping() });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.index.close();
  }
}
