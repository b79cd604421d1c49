import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CollectionsModule } from '../collections/collections.module';
import { OutboundHttpModule } from '../common/outbound-http.module';
import { SecretsModule } from '../common/secrets.module';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { StorageModule } from '../storage/storage.module';
import { WorkflowsModule } from '../workflows/workflows.module';
import { OAuthServer } from './oauth-server';
import { RateLimitModule } from '../rate-limit/rate-limit.module';

/** OAuth 2.1 for remote MCP clients: the authorization server, the resource metadata and the consent. */
@Module({})
export class OAuthModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, OAuthModule, () => ({
      module: OAuthModule,
      imports: [
        AuthModule,
        StorageModule,
        SecretsModule,
        OutboundHttpModule,
        RateLimitModule,
        CollectionsModule.forRoot(config),
        WorkflowsModule.forRoot(config),
      ],
      providers: [OAuthServer],
      exports: [OAuthServer],
    }));
  }
}
