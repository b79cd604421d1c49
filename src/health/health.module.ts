import { DynamicModule, Module, OnModuleInit } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { JobQueue } from '../domain/job-queue.port';
import { RunStore, runQueueOf } from '../domain/run-store.port';
import { VectorIndex } from '../domain/vector-index.port';
import { JobsModule } from '../jobs/jobs.module';
import { MetricsModule } from '../metrics/metrics.module';
import { SearchIndexModule } from '../search-index/search-index.module';
import { StorageConnections } from '../storage/storage-connections';
import { StorageModule } from '../storage/storage.module';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { ReadinessRegistry } from './readiness.registry';
import { WorkerHealthServer } from './worker-health.service';

/**
 * /health and /health/ready (and the worker's health port). Readiness asks the ports themselves:
 * the store, the queue and the index each answer a ping(); other features may register checks of
 * their own in the ReadinessRegistry.
 */
@Module({})
export class HealthModule implements OnModuleInit {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, HealthModule, () => ({
      module: HealthModule,
      imports: [TerminusModule, StorageModule, SearchIndexModule, JobsModule.forRoot(config), MetricsModule.forRoot(config)],
      controllers: [HealthController],
      providers: [ReadinessRegistry, HealthService, WorkerHealthServer],
      exports: [ReadinessRegistry, HealthService],
    }));
  }

  constructor(
    private readonly readiness: ReadinessRegistry,
    private readonly connections: StorageConnections,
    private readonly queue: JobQueue,
    private readonly index: VectorIndex,
    private readonly runs: RunStore,
  ) {}

  onModuleInit(): void {
    this.readiness.register({ name: 'store', check: () => this.connections.ping() });
    this.readiness.register({ name: 'queue', check: () => this.queue.ping() });
    this.readiness.register({ name: 'index', check: () => this.index.ping() });
    // Details, not a verdict: a long queue is load to shed (admission control), not a reason to stop taking traffic.
    this.readiness.register({ name: 'runs', check: () => runQueueOf(this.runs) });
  }
}
