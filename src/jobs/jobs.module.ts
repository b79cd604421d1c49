import { Global, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ReadinessRegistry } from '../health/readiness.registry';
import { storeProvider } from '../storage/storage-connections';
import { BullJobQueue } from './bull/bull-job-queue.adapter';
import { EmbeddedJobQueue } from './embedded/embedded-job-queue.adapter';
import { MongoJobStore } from './embedded/mongo-job-store.adapter';
import { SqliteJobStore } from './embedded/sqlite-job-store.adapter';
import { JobQueue } from './job-queue.port';
import { JobStore } from './job-store.port';

/** Bull on Redis when REDIS_URL is set, else the embedded queue on the document store. */
export function createJobQueue(config: AppConfig, store: JobStore): JobQueue {
  const common = { concurrency: config.JOB_CONCURRENCY, runWorkers: config.runsWorkers };
  return config.REDIS_URL
    ? new BullJobQueue({
        redisUrl: config.REDIS_URL,
        prefix: config.QUEUE_PREFIX,
        lockDurationMs: config.JOB_LEASE_MS,
        stalledIntervalMs: config.JOB_LEASE_MS,
        ...common,
      })
    : new EmbeddedJobQueue(store, { leaseMs: config.JOB_LEASE_MS, ...common });
}

/**
 * Provides the one JobQueue. Domain modules register their handlers with `process()` at init;
 * in `api` processes the queue keeps them registered but runs nothing, so they need not check
 * the role themselves.
 */
@Global()
@Module({
  providers: [
    storeProvider(JobStore, (db) => new SqliteJobStore(db), (connection) => new MongoJobStore(connection)),
    { provide: JobQueue, inject: [AppConfig, JobStore], useFactory: createJobQueue },
  ],
  exports: [JobQueue],
})
export class JobsModule implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly queue: JobQueue,
    private readonly readiness: ReadinessRegistry,
  ) {}

  onModuleInit(): void {
    this.readiness.register({ name: 'queue', check: () => this.queue.ping() });
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
