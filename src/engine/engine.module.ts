import { DynamicModule, Module, OnApplicationShutdown, Optional, Provider } from '@nestjs/common';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { ExpressionEngine } from './expressions/expression-engine';
import { NodeRegistry } from './node-registry';
import { BUILT_IN_PLUGINS, loadNodeRegistry } from './plugin-loader';

/**
 * The workflow engine as providers: the node types loaded from `plugins/` and PLUGIN_PATHS (in
 * every role: definitions are checked where they are saved), and in processes that run workers
 * the expression sandbox (the isolates are not free). Loading plugins while the module is built
 * makes a malformed plugin or a duplicate type@version stop the boot, naming the file. The
 * executor over them is built by the run-time (runs/runs.module.ts), with the services a run gives
 * its nodes.
 */
@Module({})
export class EngineModule implements OnApplicationShutdown {
  /** One module per configuration, whoever imports it (the workflows API and the run-time): one registry, one sandbox pool. */
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, EngineModule, () => {
      const registry: Provider = {
        provide: NodeRegistry,
        inject: [ROOT_LOGGER],
        useFactory: (logger: Logger) => {
          const loaded = loadNodeRegistry([BUILT_IN_PLUGINS, ...config.PLUGIN_PATHS]);
          const nodes = loaded.list();
          const outside = nodes.filter((node) => !node.source.startsWith(BUILT_IN_PLUGINS));
          logger.child({ component: 'plugins' }).info(
            {
              count: nodes.length,
              types: nodes.map((node) => `${node.definition.type}@${node.definition.version}`),
              fromPluginPaths: outside.map((node) => node.source),
            },
            'node types loaded',
          );
          return loaded;
        },
      };
      const expressions: Provider = {
        provide: ExpressionEngine,
        inject: [AppConfig, ROOT_LOGGER],
        useFactory: (config: AppConfig, logger: Logger) => ExpressionEngine.fromConfig(config, logger.child({ component: 'sandbox' })),
      };
      const workers = config.runsWorkers;
      return {
        module: EngineModule,
        providers: [registry, ...(workers ? [expressions] : [])],
        exports: [NodeRegistry, ...(workers ? [ExpressionEngine] : [])],
      };
    });
  }

  constructor(@Optional() private readonly expressions?: ExpressionEngine) {}

  /** After the queue stopped its handlers (JobsModule closes it in onModuleDestroy). */
  async onApplicationShutdown(): Promise<void> {
    await this.expressions?.close();
  }
}
