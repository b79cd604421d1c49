import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { SecretCipher } from './secret-cipher';

/** The one SecretCipher (SECRETS_KEY, or the key kept in DATA_DIR) for whoever seals or opens secrets. */
@Module({
  providers: [{ provide: SecretCipher, inject: [AppConfig], useFactory: (config: AppConfig) => SecretCipher.fromConfig(config) }],
  exports: [SecretCipher],
})
export class SecretsModule {}
