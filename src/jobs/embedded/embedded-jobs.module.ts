import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../../common/logger';
import { AppConfig } from '../../config/app-config';
import { storeProvider } from '../../storage/storage-connections';
import { StorageModule } from '../../storage/storage.module';
import { JobQueue } from '../../domain/job-queue.port';
import { JobStore } from '../../domain/job-store.port';
import { StoreCommits } from '../../domain/store-commits.port';
import { EmbeddedJobQueue } from './embedded-job-queue.adapter';
import { SqliteJobStore } from './sqlite-job-store.adapter';

/** The in-process queue whose pending jobs live in the document store (no REDIS_URL). */
@Module({})
export class EmbeddedJobsModule {
  static forRoot(): DynamicModule {
    return {
      module: EmbeddedJobsModule,
      imports: [StorageModule],
      providers: [
        storeProvider(
          JobStore,
          (db) => new SqliteJobStore(db),
          async (connection) => new (await import('../mongo/mongo-job-store.adapter')).MongoJobStore(connection),
        ),
        {
          provide: JobQueue,
          inject: [AppConfig, JobStore, StoreCommits, ROOT_LOGGER],
          useFactory: (config: AppConfig, store: JobStore, commits: StoreCommits, logger: Logger) =>
            new EmbeddedJobQueue(store, { concurrency: config.JOB_CONCURRENCY, leaseMs: config.JOB_LEASE_MS, logger, commits }),
        },
      ],
      exports: [JobQueue],
    };
  }
}
