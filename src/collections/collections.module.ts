import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { membersController } from '../auth/members.controller';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { CredentialsModule } from '../credentials/credentials.module';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SearchIndexModule } from '../search-index/search-index.module';
import { ContentStorageModule } from '../storage/content-storage.module';
import { StorageModule } from '../storage/storage.module';
import { CollectionsController } from './collections.controller';
import { CollectionsService } from './collections.service';
import { FilesModule } from './files.module';
import { SearchController } from './search.controller';
import { SearchService } from './search.service';

/** Collections, their members, files and semantic search over them (on the VectorIndex, Embedder and Reranker ports; a search's reranker credential through NodeCredentials). */
@Module({})
export class CollectionsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, CollectionsModule, () => ({
      module: CollectionsModule,
      imports: [
        AuthModule,
        StorageModule,
        ContentStorageModule,
        FilesModule.forRoot(config),
        SearchIndexModule,
        EmbeddingsModule,
        CredentialsModule,
        MetricsModule.forRoot(config),
      ],
      controllers: [CollectionsController, membersController('collection', 'api/v1/collections'), SearchController],
      providers: [CollectionsService, SearchService],
      exports: [CollectionsService, SearchService, FilesModule.forRoot(config)],
    }));
  }
}
