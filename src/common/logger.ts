import { LoggerService } from '@nestjs/common';
import { isMainThread } from 'node:worker_threads';
import pino, { Logger } from 'pino';

/**
 * One pino logger per process: JSON lines on stdout (or `fd`), secrets never passed in (see redaction).
 * In the main thread lines are written asynchronously in blocks of at least 4 KB, and at least every
 * 250 ms: a write per line was 7 to 9% of the CPU of a process running runs at LOG_LEVEL=info. pino
 * writes what is left when the process exits (`process.exit`, an uncaught error, the graceful
 * shutdown); a signal that kills it outright (`kill -9`) loses the lines of the last 250 ms. In a
 * worker thread, which pino cannot flush at exit, each line is written as it comes.
 */
export function createRootLogger(level: string, fd: 1 | 2 = 1): Logger {
  const destination = isMainThread ? pino.destination({ dest: fd, minLength: 4096, periodicFlush: 250 }) : pino.destination(fd);
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
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
