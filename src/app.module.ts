import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { AuthModule } from './auth/auth.module';
import { CollectionsModule } from './collections/collections.module';
import { RunCollectionsModule } from './collections/run-collections.module';
import { LoggerModule } from './common/logger.module';
import { OutboundHttpModule } from './common/outbound-http.module';
import { ShutdownModule } from './common/shutdown-signal';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { CredentialsModule } from './credentials/credentials.module';
import { HealthModule } from './health/health.module';
import { IngestionModule } from './ingestion/ingestion.module';
import { JobsModule } from './jobs/jobs.module';
import { MetricsModule } from './metrics/metrics.module';
import { ContentStorageModule } from './storage/content-storage.module';
import { StorageModule } from './storage/storage.module';
import { WorkflowsModule } from './workflows/workflows.module';

@Module({})
export class AppModule {
  /**
   * `logger` is the process's root logger (common/logger.ts); classes log through children of it.
   * A worker process (APP_ROLE=worker) has no HTTP server: it neither imports nor loads the MCP
   * server and the OAuth server it authenticates with (the MCP SDK's server side, zod's schemas),
   * which did nothing there but hold about 14 MiB of heap.
   */
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(logger),
        ShutdownModule,
        MetricsModule.forRoot(config),
        OutboundHttpModule,
        StorageModule,
        ContentStorageModule,
        HealthModule.forRoot(config),
        JobsModule.forRoot(config),
        AuthModule,
        CollectionsModule.forRoot(config),
        RunCollectionsModule.forRoot(config),
        CredentialsModule,
        IngestionModule.forRoot(config),
        ...(config.APP_ROLE === 'worker' ? [] : [import('./mcp/mcp.module').then(({ McpModule }) => McpModule.forRoot(config))]),
        WorkflowsModule.forRoot(config),
      ],
    };
  }
}
