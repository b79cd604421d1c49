import { Global, Module } from '@nestjs/common';
import { NodeCollectionsProvider } from '../engine/node-collections.port';
import { SearchModule } from '../search/search.module';
import { CollectionsModule } from './collections.module';
import { RunCollectionsProvider } from './run-collections.provider';

/**
 * Registers the real collections of workflow nodes. Global, so the workflow runtime receives it
 * through its port without depending on this module (and keeps working, refusing collection
 * calls, in a build without it). It uses the services of CollectionsModule, so it is imported
 * beside that module rather than by it.
 */
@Global()
@Module({
  imports: [CollectionsModule, SearchModule],
  providers: [{ provide: NodeCollectionsProvider, useClass: RunCollectionsProvider }],
  exports: [NodeCollectionsProvider],
})
export class RunCollectionsModule {}
