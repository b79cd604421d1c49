import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from './logger';

/**
 * Provides the process's root logger (common/logger.ts) so every class logs structured fields
 * through a child of it: one style, one stream, whatever the class's layer.
 */
@Global()
@Module({})
export class LoggerModule {
  static forRoot(logger: Logger): DynamicModule {
    return { module: LoggerModule, providers: [{ provide: ROOT_LOGGER, useValue: logger }], exports: [ROOT_LOGGER] };
  }
}
