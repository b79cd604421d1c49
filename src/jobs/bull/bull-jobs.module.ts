import { BullModule, getQueueToken } from '@nestjs/bull';
import { DynamicModule, Module } from '@nestjs/common';
import type Bull from 'bull';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../../common/logger';
import { AppConfig } from '../../config/app-config';
import { JobQueue } from '../../domain/job-queue.port';
import { JOB_NAMES } from '../../domain/job-names';
import { BullJobQueue, bullQueueOptions } from './bull-job-queue.adapter';
import { laneQueueName } from '../fair-turns';
import { RedisNotices } from './redis-notices';

/** Every job name's queue, and the queue of its lane (src/jobs/fair-turns.ts). */
const QUEUE_NAMES = JOB_NAMES.flatMap((name) => [name, laneQueueName(name)]);

/**
 * The queues on Redis (REDIS_URL): one BullModule configuration shared by every queue, one
 * registered queue per job name, and the JobQueue adapter over them, which binds the `@OnJob`
 * handlers of worker processes to those queues.
 */
@Module({})
export class BullJobsModule {
  static forRoot(): DynamicModule {
    return {
      module: BullJobsModule,
      imports: [
        BullModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) =>
            bullQueueOptions({
              redisUrl: config.REDIS_URL!,
              prefix: config.QUEUE_PREFIX,
              lockDurationMs: config.JOB_LEASE_MS,
              stalledIntervalMs: config.JOB_LEASE_MS,
            }),
        }),
        BullModule.registerQueue(...QUEUE_NAMES.map((name) => ({ name }))),
      ],
      providers: [
        RedisNotices,
        {
          provide: JobQueue,
          inject: [AppConfig, ROOT_LOGGER, ...QUEUE_NAMES.map((name) => getQueueToken(name))],
          useFactory: (config: AppConfig, logger: Logger, ...registered: Bull.Queue[]) => {
            const queues = new Map(QUEUE_NAMES.map((name, i) => [name, registered[i]]));
            const queueFor = (name: string): Bull.Queue => {
              const queue = queues.get(name);
              if (!queue) throw new Error(`no queue is registered for job ${name} (src/domain/job-names.ts)`);
              return queue;
            };
            return new BullJobQueue(queueFor, {
              concurrency: config.JOB_CONCURRENCY,
              logger,
              names: QUEUE_NAMES,
              where: { redisUrl: config.REDIS_URL!, prefix: config.QUEUE_PREFIX },
            });
          },
        },
      ],
      exports: [JobQueue],
    };
  }
}
