import { DynamicModule, Module, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { JobsModule } from '../jobs/jobs.module';
import { StorageModule } from '../storage/storage.module';
import { JobQueue } from '../domain/job-queue.port';
import { JOB_NAMES } from '../domain/job-names';
import { RunStore, runQueueOf } from '../domain/run-store.port';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics.service';

/**
 * The one Metrics facade of the application. Recording is always on (it costs a few map updates);
 * METRICS_ENABLED decides whether anything is exposed: the /metrics route here, the worker's
 * health port (health/), and the process metrics. Queue depths are read from the JobQueue port, the run queue (queued runs, the oldest one's age, the fullest user's queued runs) from the RunStore port.
 */
@Module({})
export class MetricsModule implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly queue: JobQueue,
    private readonly runs: RunStore,
  ) {}

  onModuleInit(): void {
    this.metrics.readQueueDepthsFrom(async () => {
      const depths = await Promise.all(JOB_NAMES.map((name) => this.queue.depth(name)));
      return Object.fromEntries(JOB_NAMES.map((name, i) => [name, depths[i]]));
    });
    this.metrics.readRunQueueFrom(async () => {
      const [queue, maxQueuedPerUser] = await Promise.all([runQueueOf(this.runs), this.runs.queuedPerUserMax()]);
      return { ...queue, maxQueuedPerUser };
    });
  }

  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, MetricsModule, () => ({
      module: MetricsModule,
      imports: [JobsModule.forRoot(config), StorageModule],
      controllers: config.METRICS_ENABLED ? [MetricsController] : [],
      providers: [
        {
          provide: Metrics,
          useFactory: () => new Metrics({ processMetrics: config.METRICS_ENABLED, queuedPerUserLimit: config.RUNS_MAX_QUEUED_PER_USER }),
        },
      ],
      exports: [Metrics],
    }));
  }
}
