import { Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { SafeFetch } from './safe-fetch';

/**
 * The one outbound HTTP client of the process (downloads of files, HTTP nodes, model endpoints):
 * one connection pool, one set of guards, closed once at shutdown after the work that used it.
 */
@Module({
  providers: [{ provide: SafeFetch, inject: [AppConfig], useFactory: (config: AppConfig) => SafeFetch.fromConfig(config) }],
  exports: [SafeFetch],
})
export class OutboundHttpModule implements OnApplicationShutdown {
  constructor(private readonly fetcher: SafeFetch) {}

  async onApplicationShutdown(): Promise<void> {
    await this.fetcher.close();
  }
}
