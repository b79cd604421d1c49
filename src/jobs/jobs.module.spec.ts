import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { HealthModule } from '../health/health.module';
import { ReadinessRegistry } from '../health/readiness.registry';
import { StorageModule } from '../storage/storage.module';
import { BullJobQueue } from './bull/bull-job-queue.adapter';
import { EmbeddedJobQueue } from './embedded/embedded-job-queue.adapter';
import { JobQueue } from './job-queue.port';
import { JobsModule } from './jobs.module';

describe('JobsModule', () => {
  let dataDir: string;

  beforeAll(() => Logger.overrideLogger(false));
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-jobs-module-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  async function boot(env: Record<string, string> = {}) {
    const config = loadConfig({ DATA_DIR: dataDir, ...env });
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(config), StorageModule, HealthModule, JobsModule],
    }).compile();
    await moduleRef.init();
    return moduleRef;
  }

  it('uses the embedded queue without REDIS_URL, reports readiness, and closes with the app', async () => {
    const app = await boot();
    const queue = app.get(JobQueue);
    expect(queue).toBeInstanceOf(EmbeddedJobQueue);
    const check = app.get(ReadinessRegistry).list().find((c) => c.name === 'queue');
    await expect(check?.check()).resolves.toBeUndefined();

    await app.close();

    await expect(queue.ping()).rejects.toThrow(/shutting down/);
  });

  it('uses Bull when REDIS_URL is set', async () => {
    // Nothing connects until the queue is used, so no Redis is needed to check the choice.
    const app = await boot({ REDIS_URL: 'redis://127.0.0.1:1' });
    expect(app.get(JobQueue)).toBeInstanceOf(BullJobQueue);
    await app.close();
  });
});
