import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** One pino logger per process: JSON lines on stdout (or `fd`), secrets never passed in (see redaction). */
export function createRootLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(fd));
}

/** Routes Nest's own log calls (bootstrap, module init) into the same pino stream. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}

/** Injection token of the process's root pino logger; classes take a child with their `component`. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
