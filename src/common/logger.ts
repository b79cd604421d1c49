import { LoggerService } from '@nestjs/common';
import { isMainThread } from 'node:worker_threads';
import pino, { Logger } from 'pino';

/**
 * One pino logger per process: JSON lines on stdout (or `fd`), secrets never passed in (see redaction).
 * Lines are written asynchronously, those logged meanwhile in one write: a write per line, in the
 * event loop, was about a twentieth of the CPU of a process running runs at LOG_LEVEL=info. pino
 * writes what is left when the process exits (`process.exit`, an uncaught error, the graceful
 * shutdown); a signal that kills it outright (`kill -9`) loses the lines of the last moment. In a
 * worker thread, which pino cannot flush at exit, lines are written one by one.
 */
export function createRootLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino(
    { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: fd, sync: !isMainThread }),
  );
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
