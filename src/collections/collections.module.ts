import { Module } from '@nestjs/common';
import { membersController } from '../auth/members.controller';
import { EmbeddingsModule } from '../embeddings/embeddings.module';
import { SearchModule } from '../search/search.module';
import { CollectionsController } from './collections.controller';
import { CollectionsService } from './collections.service';
import { FilesModule } from './files.module';
import { SearchController } from './search.controller';
import { SearchService } from './search.service';

/** Collections, their members, files and semantic search over them (on the VectorIndex and Embedder ports). */
@Module({
  imports: [FilesModule, SearchModule, EmbeddingsModule],
  controllers: [CollectionsController, membersController('collection', 'api/v1/collections'), SearchController],
  providers: [CollectionsService, SearchService],
  exports: [CollectionsService, SearchService, FilesModule],
})
export class CollectionsModule {}
