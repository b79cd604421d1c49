import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { JobsModule } from '../jobs/jobs.module';
import { SearchIndexModule } from '../search-index/search-index.module';
import { ContentStorageModule } from '../storage/content-storage.module';
import { FilesController } from './files.controller';
import { FilesService } from './files.service';

/** The files of collections: uploads and downloads queued for ingestion, their records and bytes. */
@Module({})
export class FilesModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, FilesModule, () => ({
      module: FilesModule,
      imports: [AuthModule, ContentStorageModule, SearchIndexModule, JobsModule.forRoot(config)],
      controllers: [FilesController],
      providers: [FilesService],
      exports: [FilesService],
    }));
  }
}
