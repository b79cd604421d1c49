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

/** How long a process's hold on its store's queue and its queue's store outlives its last renewal. */
export const PAIRING_LEASE_MS = 30_000;

/**
 * Provides the one JobQueue: Bull on Redis when REDIS_URL is set, else the embedded queue on the
 * document store. Handlers are `@OnJob` methods of the services that processes running workers
 * provide; they are checked against the job names at init (a mismatch stops the boot) and bound to
 * the queue once the whole application has bootstrapped.
 */
@Module({})
export class JobsModule implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private handlers: DiscoveredJobHandler[] = [];
  private renewal?: NodeJS.Timeout;

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
   * Every process, whatever its role, holds in the store which queue it puts and takes its runs on,
   * and in that queue (Redis) which store it serves, each under a lease of PAIRING_LEASE_MS renewed
   * a third of it apart while the process lives. A process that finds either held for another value
   * by a live lease stops at boot naming both, whichever started first; once every process of the
   * former configuration has stopped and its lease has run out, a new one takes the records over.
   */
  private async checkPairing(): Promise<void> {
    const storeId = await this.identity.claim('store', `store_${randomUUID()}`);
    const queue = this.queue.describe();
    const role = `this process (APP_ROLE=${this.config.APP_ROLE})`;
    const heldQueue = await this.identity.hold('queue', queue, PAIRING_LEASE_MS);
    if (heldQueue !== queue) {
      throw new Error(
        `The queue of ${role} is ${queue}, but a running process on its store puts its runs on ${heldQueue}: give every process the same REDIS_URL and QUEUE_PREFIX (or none), or stop the others first (their hold lapses ${PAIRING_LEASE_MS / 1000} s after the last of them stopped)`,
      );
    }
    const heldStore = await this.queue.pairStore(storeId, PAIRING_LEASE_MS);
    if (heldStore !== storeId) {
      throw new Error(
        `The queue (${queue}) carries the runs of store ${heldStore} for a running process, but the store of ${role} is ${storeId}: give every process the same DATA_DIR (or MONGODB_URI), or stop the others first (their hold lapses ${PAIRING_LEASE_MS / 1000} s after the last of them stopped)`,
      );
    }
    this.renewal = setInterval(() => void this.renewPairing(storeId, queue), PAIRING_LEASE_MS / 3);
    this.renewal.unref();
  }

  /** Renews both leases; one lost (this process stalled past its lease) is logged, not fatal. */
  private async renewPairing(storeId: string, queue: string): Promise<void> {
    try {
      const heldQueue = await this.identity.hold('queue', queue, PAIRING_LEASE_MS);
      const heldStore = await this.queue.pairStore(storeId, PAIRING_LEASE_MS);
      if (heldQueue !== queue || heldStore !== storeId) {
        this.logger.error({ queue, heldQueue, storeId, heldStore }, 'another configuration took over the store or queue of this process');
      }
    } catch (err) {
      this.logger.warn({ err }, 'could not renew the pairing of store and queue');
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
    clearInterval(this.renewal);
    await this.queue.close();
  }
}
