import { Global, Module, OnModuleInit } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { StorageConnections } from '../storage/storage-connections';
import { HealthController } from './health.controller';
import { ReadinessRegistry } from './readiness.registry';

@Global()
@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [ReadinessRegistry],
  exports: [ReadinessRegistry],
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
