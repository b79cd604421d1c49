import { Module } from '@nestjs/common';
import { SearchModule } from '../search/search.module';
import { FilesController } from './files.controller';
import { FilesService } from './files.service';

@Module({
  imports: [SearchModule],
  controllers: [FilesController],
  providers: [FilesService],
  exports: [FilesService],
})
export class FilesModule {}
