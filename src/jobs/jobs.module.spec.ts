import { Injectable, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { testRedis, TestRedis } from '../../test/utils/workflows-fixtures';
import { LoggerModule } from '../common/logger.module';
import { loadConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { MetricsModule } from '../metrics/metrics.module';
import { StorageModule } from '../storage/storage.module';
import { BullJobQueue } from './bull/bull-job-queue.adapter';
import { EmbeddedJobQueue } from './embedded/embedded-job-queue.adapter';
import { JobContext, JobQueue } from '../domain/job-queue.port';
import { OnJob, OnJobOptions } from './on-job.decorator';
import { FILE_INGEST_JOB, FILE_INGEST_LARGE_JOB, RUN_JOB } from '../domain/job-names';
import { JobsModule } from './jobs.module';

/** What the test handlers saw, by job name. */
@Injectable()
class Seen {
  readonly jobs: JobContext<unknown>[] = [];
}

/** A service whose `@OnJob(name)` method records what it runs, as the modules' services do. */
function recordingHandler(name: string, options: OnJobOptions = { concurrency: 2 }): Type<unknown> {
  @Injectable()
  class RecordingHandler {
    constructor(private readonly seen: Seen) {}

    @OnJob(name, options)
    async handle(job: JobContext<unknown>): Promise<void> {
      this.seen.jobs.push(job);
    }
  }
  return RecordingHandler;
}

describe('JobsModule', () => {
  let dataDir: string;
  let redis: TestRedis | null = null;

  beforeAll(async () => {
    redis = await testRedis('jobs-module');
    if (!redis && process.env.CI) throw new Error('Redis is not reachable on 127.0.0.1:6379');
  });
  afterAll(async () => {
    await redis?.cleanup();
  });
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-jobs-module-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** Handlers of both file ingestion lanes. */
  const fileHandlers = () => [recordingHandler(FILE_INGEST_JOB), recordingHandler(FILE_INGEST_LARGE_JOB)];

  async function boot(env: Record<string, string>, processors: Type<unknown>[]) {
    const config = loadConfig({ DATA_DIR: dataDir, ...env });
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(pino({ level: 'silent' })),
        MetricsModule.forRoot(config),
        StorageModule,
        JobsModule.forRoot(config),
      ],
      providers: [Seen, ...processors],
    }).compile();
    try {
      await moduleRef.init();
    } catch (error) {
      // A failed init runs no shutdown hooks (the process exits); the queues it connected must close.
      await moduleRef.get(JobQueue).close();
      throw error;
    }
    return moduleRef;
  }

  const queues = () => [
    { name: 'embedded', env: () => ({}), adapter: EmbeddedJobQueue },
    { name: 'bull', env: () => (redis ? { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix } : null), adapter: BullJobQueue },
  ];

  describe.each(queues())('on the $name queue', ({ env, adapter }) => {
    it('runs jobs through the @OnJob methods it found, with the queue context, and answers a ping', async () => {
      const settings = env();
      if (!settings) return;
      const app = await boot(settings, [...fileHandlers(), recordingHandler(RUN_JOB)]);
      try {
        const queue = app.get(JobQueue);
        expect(queue).toBeInstanceOf(adapter);
        await queue.enqueue(RUN_JOB, { runId: 'run_1' }, { attempts: 2 });
        const seen = app.get(Seen).jobs;
        const deadline = Date.now() + 10_000;
        while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(seen).toEqual([expect.objectContaining({ name: RUN_JOB, data: { runId: 'run_1' }, attempt: 1, maxAttempts: 2 })]);
        expect(seen[0].signal).toBeInstanceOf(AbortSignal);
        await expect(queue.ping()).resolves.toBeUndefined();
      } finally {
        await app.close();
      }
    });

    it('stops the boot of a worker process when a job has no handler, naming the job', async () => {
      const settings = env();
      if (!settings) return;
      await expect(boot(settings, fileHandlers())).rejects.toThrow(/job "workflow\.run" has no handler/);
    });

    it('stops the boot when a handler names a job that does not exist, naming the handler', async () => {
      const settings = env();
      if (!settings) return;
      await expect(boot(settings, [...fileHandlers(), recordingHandler(RUN_JOB), recordingHandler('report.mail')])).rejects.toThrow(
        /report\.mail/,
      );
    });
  });

  it('binds no worker for a job whose concurrency, read from the configuration, is 0', async () => {
    const app = await boot({ INGEST_LARGE_CONCURRENCY: '0' }, [
      recordingHandler(FILE_INGEST_JOB),
      recordingHandler(FILE_INGEST_LARGE_JOB, { concurrency: (config) => config.INGEST_LARGE_CONCURRENCY }),
      recordingHandler(RUN_JOB),
    ]);
    try {
      const queue = app.get(JobQueue);
      await queue.enqueue(FILE_INGEST_LARGE_JOB, { fileId: 'fle_large' });
      await queue.enqueue(FILE_INGEST_JOB, { fileId: 'fle_small' });
      const seen = app.get(Seen).jobs;
      const deadline = Date.now() + 30_000;
      while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen.map((job) => job.name)).toEqual([FILE_INGEST_JOB]);
      expect(await queue.depth(FILE_INGEST_LARGE_JOB)).toMatchObject({ waiting: 1, active: 0 });
    } finally {
      await app.close();
    }
  });

  it('refuses two handlers for one job', async () => {
    await expect(boot({}, [...fileHandlers(), recordingHandler(RUN_JOB), recordingHandler(RUN_JOB)])).rejects.toThrow(
      /job "workflow\.run" has 2 handlers/,
    );
  });

  it('an api process needs no handlers and refuses to run any', async () => {
    const api = await boot({ APP_ROLE: 'api' }, []);
    await api.close();
    await expect(boot({ APP_ROLE: 'api' }, [recordingHandler(RUN_JOB)])).rejects.toThrow(/an api process runs no jobs/);
  });

  it('closes the queue with the application', async () => {
    const app = await boot({}, [...fileHandlers(), recordingHandler(RUN_JOB)]);
    const queue = app.get(JobQueue);
    await app.close();
    await expect(queue.ping()).rejects.toThrow(/shutting down/);
  });
});
