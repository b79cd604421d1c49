import { Module } from '@nestjs/common';
import { SearchModule } from '../search/search.module';
import { CollectionsController } from './collections.controller';
import { CollectionsService } from './collections.service';
import { FilesModule } from './files.module';

@Module({
  imports: [FilesModule, SearchModule],
  controllers: [CollectionsController],
  providers: [CollectionsService],
  exports: [CollectionsService, FilesModule],
})
export class CollectionsModule {}
