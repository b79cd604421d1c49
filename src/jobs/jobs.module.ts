import { DynamicModule, Global, Module, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { ReadinessRegistry } from '../health/readiness.registry';
import { Metrics } from '../metrics/metrics.service';
import { BullJobsModule } from './bull/bull-jobs.module';
import { EmbeddedJobsModule } from './embedded/embedded-jobs.module';
import { DiscoveredJobHandler, JobHandlerScan } from './job-handlers';
import { JobQueue } from './job-queue.port';
import { JOB_NAMES } from './job-names';

/**
 * Provides the one JobQueue: Bull on Redis when REDIS_URL is set, else the embedded queue on the
 * document store. Handlers are `@Processor` classes that the modules provide in processes that
 * run workers; they are checked against the job names at init (a mismatch stops the boot) and
 * run once the whole application has bootstrapped.
 */
@Global()
@Module({})
export class JobsModule implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private handlers: DiscoveredJobHandler[] = [];

  static forRoot(config: AppConfig): DynamicModule {
    const adapter = config.REDIS_URL ? BullJobsModule.forRoot() : EmbeddedJobsModule.forRoot();
    return {
      module: JobsModule,
      imports: [DiscoveryModule, adapter],
      providers: [JobHandlerScan],
      exports: [adapter],
    };
  }

  constructor(
    private readonly queue: JobQueue,
    private readonly scan: JobHandlerScan,
    private readonly readiness: ReadinessRegistry,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.handlers = this.scan.handlers();
    this.readiness.register({ name: 'queue', check: () => this.queue.ping() });
    this.metrics.readQueueDepthsFrom(async () => {
      const depths = await Promise.all(JOB_NAMES.map((name) => this.queue.depth(name)));
      return Object.fromEntries(JOB_NAMES.map((name, i) => [name, depths[i]]));
    });
  }

  onApplicationBootstrap(): void {
    this.queue.start(this.handlers);
  }

  /**
   * Global modules are destroyed after the others, so handlers may already have lost services
   * that free their resources in onModuleDestroy; those should use onApplicationShutdown. The
   * store closes in onApplicationShutdown, after this: handing jobs back still reaches it.
   */
  async onModuleDestroy(): Promise<void> {
    await this.queue.close();
  }
}
