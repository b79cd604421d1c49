import { DynamicModule, Inject, Module, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { EmbeddedJobsModule } from './embedded/embedded-jobs.module';
import { DiscoveredJobHandler, JobHandlerScan } from './job-handlers';
import { JobQueue } from '../domain/job-queue.port';
import { ServiceIdentityStore } from '../domain/service-identity.port';
import { randomUUID } from 'node:crypto';
import { StorageModule } from '../storage/storage.module';
import { ROOT_LOGGER } from '../common/logger';
import type { Logger } from 'pino';

/**
 * Provides the one JobQueue: Bull on Redis when REDIS_URL is set, else the embedded queue on the
 * document store. Handlers are `@OnJob` methods of the services that processes running workers
 * provide; they are checked against the job names at init (a mismatch stops the boot) and bound to
 * the queue once the whole application has bootstrapped.
 */
@Module({})
export class JobsModule implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private handlers: DiscoveredJobHandler[] = [];

  /**
   * A promise (Nest's `imports` take one): Bull, ioredis and @nestjs/bull are loaded only when
   * REDIS_URL is set; imported with this module, they cost every process of the embedded default
   * heap it never used (the three alone: about 9 MiB of heap, 40 MiB resident).
   */
  static forRoot(config: AppConfig): Promise<DynamicModule> {
    return oncePerConfig(config, JobsModule, async () => {
      const adapter = config.REDIS_URL ? (await import('./bull/bull-jobs.module')).BullJobsModule.forRoot() : EmbeddedJobsModule.forRoot();
      return { module: JobsModule, imports: [DiscoveryModule, StorageModule, adapter], providers: [JobHandlerScan], exports: [adapter] };
    });
  }

  constructor(
    private readonly queue: JobQueue,
    private readonly scan: JobHandlerScan,
    private readonly identity: ServiceIdentityStore,
    private readonly config: AppConfig,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    this.handlers = this.scan.handlers();
    await this.checkPairing();
  }

  /**
   * Processes that accept runs (APP_ROLE all, api) record in the store which queue they put its
   * runs on, and in that queue which store it serves; a worker checks both before it takes a job,
   * so one pointed at another store or queue stops at boot, saying which, rather than take jobs
   * for runs it cannot find.
   */
  private async checkPairing(): Promise<void> {
    const storeId = await this.identity.claim('store', `store_${randomUUID()}`);
    const queue = this.queue.describe();
    if (this.config.APP_ROLE !== 'worker') {
      const before = await this.identity.replace('queue', queue);
      if (before !== null && before !== queue) this.logger.warn({ before, now: queue }, 'the runs of this store now go to another queue');
      await this.queue.pairStore(storeId, true);
      return;
    }
    const recorded = await this.identity.claim('queue', queue);
    if (recorded !== queue) {
      throw new Error(
        `This worker's queue is ${queue}, but the processes that accept runs into its store put them on ${recorded}: give every process the same REDIS_URL and QUEUE_PREFIX (or none)`,
      );
    }
    const paired = await this.queue.pairStore(storeId, false);
    if (paired !== storeId) {
      throw new Error(
        `The queue (${queue}) carries the runs of store ${paired}, but this worker's store is ${storeId}: give every process the same DATA_DIR (or MONGODB_URI)`,
      );
    }
  }

  onApplicationBootstrap(): void {
    for (const handler of this.handlers) {
      // Concurrency 0: jobs of this name wait for a worker process configured to run them.
      if (handler.concurrency === 0) continue;
      this.queue.process(handler.name, handler.handle, {
        concurrency: handler.concurrency,
        claiming: handler.claiming,
        extraSlots: handler.extraSlots,
      });
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
