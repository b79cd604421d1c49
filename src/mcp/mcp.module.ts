import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CollectionsModule } from '../collections/collections.module';
import { SecretsModule } from '../common/secrets.module';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { OAuthModule } from '../oauth/oauth.module';
import { WorkflowsModule } from '../workflows/workflows.module';
import { ServicesBackendFactory } from './in-process/services-backend.adapter';
import { McpAuthentication } from './transports/mcp-auth';
import { McpHttpEndpoints } from './transports/mcp-http-endpoints';

/** The remote MCP server: both protocol eras at /mcp and legacy SSE at /sse, on the main HTTP server. */
@Module({})
export class McpModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, McpModule, () => ({
      module: McpModule,
      imports: [AuthModule, CollectionsModule.forRoot(config), SecretsModule, WorkflowsModule.forRoot(config), OAuthModule.forRoot(config)],
      providers: [ServicesBackendFactory, McpAuthentication, McpHttpEndpoints],
      exports: [McpHttpEndpoints],
    }));
  }
}
