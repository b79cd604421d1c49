import { DynamicModule, Module, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { BullJobsModule } from './bull/bull-jobs.module';
import { EmbeddedJobsModule } from './embedded/embedded-jobs.module';
import { DiscoveredJobHandler, JobHandlerScan } from './job-handlers';
import { JobQueue } from '../domain/job-queue.port';

/**
 * Provides the one JobQueue: Bull on Redis when REDIS_URL is set, else the embedded queue on the
 * document store. Handlers are `@OnJob` methods of the services that processes running workers
 * provide; they are checked against the job names at init (a mismatch stops the boot) and bound to
 * the queue once the whole application has bootstrapped.
 */
@Module({})
export class JobsModule implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private handlers: DiscoveredJobHandler[] = [];

  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, JobsModule, () => {
      const adapter = config.REDIS_URL ? BullJobsModule.forRoot() : EmbeddedJobsModule.forRoot();
      return { module: JobsModule, imports: [DiscoveryModule, adapter], providers: [JobHandlerScan], exports: [adapter] };
    });
  }

  constructor(
    private readonly queue: JobQueue,
    private readonly scan: JobHandlerScan,
  ) {}

  onModuleInit(): void {
    this.handlers = this.scan.handlers();
  }

  onApplicationBootstrap(): void {
    for (const handler of this.handlers) {
      // Concurrency 0: jobs of this name wait for a worker process configured to run them.
      if (handler.concurrency === 0) continue;
      this.queue.process(handler.name, handler.handle, { concurrency: handler.concurrency });
    }
  }

  /**
   * A module is destroyed after the modules that import it, so the services whose handlers this
   * stops may already have run their onModuleDestroy; what a handler needs until it stops is freed
   * in onApplicationShutdown, which runs after every onModuleDestroy. The store closes there too,
   * after this: handing jobs back still reaches it.
   */
  async onModuleDestroy(): Promise<void> {
    await this.queue.close();
  }
}
