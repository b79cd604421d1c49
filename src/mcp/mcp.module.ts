import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CollectionsModule } from '../collections/collections.module';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { WorkflowsModule } from '../workflows/workflows.module';
import { ServicesBackendFactory } from './in-process/services-backend.adapter';
import { McpHttpEndpoints } from './transports/mcp-http-endpoints';

/** The remote MCP server: Streamable HTTP at /mcp and legacy SSE at /sse on the main HTTP server. */
@Module({})
export class McpModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, McpModule, () => ({
      module: McpModule,
      imports: [AuthModule, CollectionsModule.forRoot(config), WorkflowsModule.forRoot(config)],
      providers: [ServicesBackendFactory, McpHttpEndpoints],
      exports: [McpHttpEndpoints],
    }));
  }
}
