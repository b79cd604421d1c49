import type { Logger } from 'pino';
import { DynamicModule, Module, Provider } from '@nestjs/common';
import { membersController } from '../auth/members.controller';
import { AppConfig } from '../config/app-config';
import { loadNodeRegistry, BUILT_IN_PLUGINS } from '../engine/plugin-loader';
import { NodeRegistry } from '../engine/node-registry';
import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';
import { SqliteWorkflowStore } from '../storage/embedded/sqlite-workflow-store.adapter';
import { MongoRunStore } from '../storage/mongo/mongo-run-store.adapter';
import { MongoWorkflowStore } from '../storage/mongo/mongo-workflow-store.adapter';
import { RunStore } from '../storage/ports/run-store.port';
import { WorkflowStore } from '../storage/ports/workflow-store.port';
import { storeProvider } from '../storage/storage-connections';
import { ActiveRuns } from './active-runs';
import { EngineRuntime, RUNS_LOGGER } from './engine-runtime.service';
import { NodeTypesController } from './node-types.controller';
import { RunPlans } from './run-plans';
import { RunWorker } from './run-worker.service';
import { RunsController } from './runs.controller';
import { DEFAULT_RECONCILER_OPTIONS, RECONCILER_OPTIONS, RunsReconciler } from './runs-reconciler.service';
import { RunsService } from './runs.service';
import { SecretCipher } from './secret-cipher';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsService } from './workflows.service';

/** Run execution exists only in processes that run workers (APP_ROLE all or worker). */
const workerProviders: Provider[] = [
  EngineRuntime,
  RunPlans,
  RunWorker,
  RunsReconciler,
  {
    provide: RECONCILER_OPTIONS,
    inject: [AppConfig],
    // A lost worker's runs are found within about one lease after it expired.
    useFactory: (config: AppConfig) => ({ ...DEFAULT_RECONCILER_OPTIONS, intervalMs: Math.min(DEFAULT_RECONCILER_OPTIONS.intervalMs, config.JOB_LEASE_MS) }),
  },
];

/**
 * Workflows, versions, variables, the webhook and runs. Node plugins are loaded while the module
 * is built, so a malformed plugin or a duplicate type@version stops the boot, naming the file.
 */
@Module({})
export class WorkflowsModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: WorkflowsModule,
      controllers: [WorkflowsController, membersController('workflow', 'api/v1/workflows'), RunsController, NodeTypesController],
      providers: [
        storeProvider(WorkflowStore, (db) => new SqliteWorkflowStore(db), (c) => new MongoWorkflowStore(c)),
        storeProvider(RunStore, (db) => new SqliteRunStore(db), (c) => new MongoRunStore(c)),
        { provide: NodeRegistry, useFactory: () => loadNodeRegistry([BUILT_IN_PLUGINS, ...config.PLUGIN_PATHS]) },
        { provide: SecretCipher, useFactory: () => SecretCipher.fromConfig(config) },
        { provide: RUNS_LOGGER, useValue: logger.child({ component: 'runs' }) },
        ActiveRuns,
        WorkflowsService,
        RunsService,
        ...(config.runsWorkers ? workerProviders : []),
      ],
      exports: [WorkflowsService, RunsService, NodeRegistry, WorkflowStore, RunStore],
    };
  }
}
