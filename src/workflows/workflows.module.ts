import { DynamicModule, Inject, Module, OnApplicationShutdown, Provider } from '@nestjs/common';
import { membersController } from '../auth/members.controller';
import { AppConfig } from '../config/app-config';
import { EngineModule } from '../engine/engine.module';
import { ActiveRuns } from './active-runs';
import { NodeOptionsService } from './node-options.service';
import { NodeTypesController } from './node-types.controller';
import { MemoryRateLimiter } from './rate-limit/memory-rate-limiter.adapter';
import { RateLimiter } from './rate-limit/rate-limiter.port';
import { RedisRateLimiter } from './rate-limit/redis-rate-limiter.adapter';
import { RunEvents } from './run-events';
import { RunPlans } from './run-plans';
import { runProcessor } from './run.processor';
import { RunWorker } from './run-worker.service';
import { RunsController } from './runs.controller';
import { DEFAULT_RECONCILER_OPTIONS, RECONCILER_OPTIONS, RunsReconciler } from './runs-reconciler.service';
import { RunsService } from './runs.service';
import { SecretCipher } from './secret-cipher';
import { WorkflowsController } from './workflows.controller';
import { Clock, DEFAULT_SCHEDULER_OPTIONS, SCHEDULER_OPTIONS, SystemClock, WorkflowScheduler } from './workflow-scheduler.service';
import { WorkflowToolEvents, WorkflowToolsService } from './workflow-tools.service';
import { WorkflowToolsController } from './workflow-tools.controller';
import { WorkflowsService } from './workflows.service';

/** Run execution exists only in processes that run workers (APP_ROLE all or worker). */
function workerProviders(config: AppConfig): Provider[] {
  return [
    RunPlans,
    RunWorker,
    runProcessor(config.JOB_CONCURRENCY),
    RunsReconciler,
    {
      provide: RECONCILER_OPTIONS,
      // A lost worker's runs are found within about one lease after it expired.
      useValue: { ...DEFAULT_RECONCILER_OPTIONS, intervalMs: Math.min(DEFAULT_RECONCILER_OPTIONS.intervalMs, config.JOB_LEASE_MS) },
    },
    WorkflowScheduler,
    { provide: Clock, useClass: SystemClock },
    { provide: SCHEDULER_OPTIONS, useValue: DEFAULT_SCHEDULER_OPTIONS },
  ];
}

/** Webhook rate limits count in Redis when there is one (several API processes), else in this process. */
const rateLimiter: Provider = {
  provide: RateLimiter,
  inject: [AppConfig],
  useFactory: (config: AppConfig): RateLimiter =>
    config.REDIS_URL ? new RedisRateLimiter(config.REDIS_URL, config.QUEUE_PREFIX) : new MemoryRateLimiter(),
};

/** Workflows, versions, variables, the webhook and runs, on the engine's node types and executor. */
@Module({})
export class WorkflowsModule implements OnApplicationShutdown {
  constructor(@Inject(RateLimiter) private readonly limiter: RateLimiter) {}

  async onApplicationShutdown(): Promise<void> {
    await this.limiter.close();
  }

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkflowsModule,
      // Global: the MCP server offers published workflows as tools.
      global: true,
      imports: [EngineModule.forRoot(config)],
      controllers: [WorkflowsController, membersController('workflow', 'api/v1/workflows'), RunsController, NodeTypesController, WorkflowToolsController],
      providers: [
        { provide: SecretCipher, useFactory: () => SecretCipher.fromConfig(config) },
        ActiveRuns,
        RunEvents,
        rateLimiter,
        WorkflowsService,
        RunsService,
        NodeOptionsService,
        WorkflowToolEvents,
        WorkflowToolsService,
        ...(config.runsWorkers ? workerProviders(config) : []),
      ],
      exports: [WorkflowsService, RunsService, WorkflowToolsService, WorkflowToolEvents, EngineModule],
    };
  }
}
