import { Global, Module } from '@nestjs/common';
import { NodeCollectionsProvider } from '../engine/collections-provider';
import { SearchModule } from '../search/search.module';
import { FilesModule } from './files.module';
import { RunCollectionsProvider } from './run-collections.provider';

/**
 * Registers the real collections of workflow nodes. Global, so the workflow runtime receives it
 * through its port without depending on this module (and keeps working, refusing collection
 * calls, in a build without it).
 */
@Global()
@Module({
  imports: [FilesModule, SearchModule],
  providers: [{ provide: NodeCollectionsProvider, useClass: RunCollectionsProvider }],
  exports: [NodeCollectionsProvider],
})
export class RunCollectionsModule {}
