import { Module } from '@nestjs/common';
import { membersController } from '../auth/members.controller';
import { SearchModule } from '../search/search.module';
import { CollectionsController } from './collections.controller';
import { CollectionsService } from './collections.service';
import { FilesModule } from './files.module';

@Module({
  imports: [FilesModule, SearchModule],
  controllers: [CollectionsController, membersController('collection', 'api/v1/collections')],
  providers: [CollectionsService],
  exports: [CollectionsService, FilesModule],
})
export class CollectionsModule {}
