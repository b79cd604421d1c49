import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { membersController } from '../auth/members.controller';
import { OutboundHttpModule } from '../common/outbound-http.module';
import { SecretsModule } from '../common/secrets.module';
import { NodeCredentials } from '../engine/node-credentials.port';
import { StorageModule } from '../storage/storage.module';
import { CredentialsController } from './credentials.controller';
import { CredentialsService } from './credentials.service';

/** Credentials and their sharing; the run-time receives them through the engine's NodeCredentials port. */
@Module({
  imports: [AuthModule, StorageModule, SecretsModule, OutboundHttpModule],
  controllers: [CredentialsController, membersController('credential', 'api/v1/credentials')],
  providers: [CredentialsService, { provide: NodeCredentials, useExisting: CredentialsService }],
  exports: [CredentialsService, NodeCredentials],
})
export class CredentialsModule {}
