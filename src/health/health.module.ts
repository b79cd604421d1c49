import { Global, Module, OnModuleInit } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { StorageConnections } from '../storage/storage-connections';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { ReadinessRegistry } from './readiness.registry';
import { WorkerHealthServer } from './worker-health.service';

@Global()
@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [ReadinessRegistry, HealthService, WorkerHealthServer],
  exports: [ReadinessRegistry, HealthService],
})
export class HealthModule implements OnModuleInit {
  constructor(
    private readonly readiness: ReadinessRegistry,
    private readonly connections: StorageConnections,
  ) {}

  onModuleInit(): void {
    this.readiness.register({ name: 'store', check: () => this.connections.ping() });
  }
}
