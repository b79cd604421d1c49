import { Global, Module } from '@nestjs/common';
import { membersController } from '../auth/members.controller';
import { SecretsModule } from '../common/secrets.module';
import { NodeCredentials } from '../engine/node-credentials.port';
import { CredentialsController } from './credentials.controller';
import { CredentialsService } from './credentials.service';

/**
 * Credentials and their sharing. Global for one provider: the run-time receives them through the
 * engine's NodeCredentials port without depending on this module, as collections are given.
 */
@Global()
@Module({
  imports: [SecretsModule],
  controllers: [CredentialsController, membersController('credential', 'api/v1/credentials')],
  providers: [CredentialsService, { provide: NodeCredentials, useExisting: CredentialsService }],
  exports: [CredentialsService, NodeCredentials],
})
export class CredentialsModule {}
