import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics.service';

/**
 * The one Metrics facade of the application. Recording is always on (it costs a few map updates);
 * METRICS_ENABLED decides whether anything is exposed: the /metrics route here, the worker's
 * health port (health/), and the process metrics.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: MetricsModule,
      controllers: config.METRICS_ENABLED ? [MetricsController] : [],
      providers: [{ provide: Metrics, useFactory: () => new Metrics({ processMetrics: config.METRICS_ENABLED }) }],
      exports: [Metrics],
    };
  }
}
