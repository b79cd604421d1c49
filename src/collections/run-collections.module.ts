import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { NodeCollectionsProvider } from '../engine/node-collections.port';
import { CollectionsModule } from './collections.module';
import { RunCollectionsProvider } from './run-collections.provider';

/**
 * The collections of workflow nodes (the engine's NodeCollectionsProvider port), over the services
 * of CollectionsModule: the run-time and the node options of the workflows API import it.
 */
@Module({})
export class RunCollectionsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, RunCollectionsModule, () => ({
      module: RunCollectionsModule,
      imports: [CollectionsModule.forRoot(config)],
      providers: [{ provide: NodeCollectionsProvider, useClass: RunCollectionsProvider }],
      exports: [NodeCollectionsProvider],
    }));
  }
}
