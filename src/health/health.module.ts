import { Global, Module, OnModuleInit } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { JobQueue } from '../jobs/job-queue.port';
import { SearchModule } from '../search/search.module';
import { VectorIndex } from '../search/vector-index.port';
import { RunStore, runQueueOf } from '../storage/run-store.port';
import { StorageConnections } from '../storage/storage-connections';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { ReadinessRegistry } from './readiness.registry';
import { WorkerHealthServer } from './worker-health.service';

/**
 * /health and /health/ready (and the worker's health port). Readiness asks the ports themselves:
 * the store, the queue and the index each answer a ping(); other features may register checks of
 * their own in the ReadinessRegistry.
 */
@Global()
@Module({
  imports: [TerminusModule, SearchModule],
  controllers: [HealthController],
  providers: [ReadinessRegistry, HealthService, WorkerHealthServer],
  exports: [ReadinessRegistry, HealthService],
})
export class HealthModule implements OnModuleInit {
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
