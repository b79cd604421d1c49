import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ApprovalLinks } from './approval-links';
import { SecretCipher } from './secret-cipher';

/**
 * The one SecretCipher (SECRETS_KEY, or the key kept in DATA_DIR) for whoever seals or opens
 * secrets, and the approval links signed under a key derived from it.
 */
@Module({
  providers: [
    { provide: SecretCipher, inject: [AppConfig], useFactory: (config: AppConfig) => SecretCipher.fromConfig(config) },
    {
      provide: ApprovalLinks,
      inject: [SecretCipher, AppConfig],
      useFactory: (cipher: SecretCipher, config: AppConfig) => new ApprovalLinks(cipher, config.publicUrl),
    },
  ],
  exports: [SecretCipher, ApprovalLinks],
})
export class SecretsModule {}
