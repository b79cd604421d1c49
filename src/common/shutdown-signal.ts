import { Global, Injectable, Module } from '@nestjs/common';
import { setMaxListeners } from 'node:events';
import { AppError, ErrorCode } from './app-error';

/** What a request that arrives while the service stops is answered: another instance, or this one restarted, can take it. */
export const SERVICE_STOPPING = new AppError(ErrorCode.UNAVAILABLE, 'The service is stopping; try again shortly', {
  retryable: true,
  details: { retryAfterSeconds: 1 },
});

/**
 * Aborted the moment the process begins to stop (SIGTERM, SIGINT), before Nest closes anything:
 * new requests are refused with 503 while running work drains, and long waits (`?wait=`, MCP tool
 * calls) answer with where their run stands instead of holding the shutdown up.
 */
@Injectable()
export class ShutdownSignal {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;

  constructor() {
    // Every caller waiting for a run listens here while it waits, and drops its listener after:
    // fifty at once is load, not a leak.
    setMaxListeners(0, this.signal);
  }

  get stopping(): boolean {
    return this.signal.aborted;
  }

  begin(): void {
    if (!this.stopping) this.controller.abort(SERVICE_STOPPING);
  }
}

@Global()
@Module({ providers: [ShutdownSignal], exports: [ShutdownSignal] })
export class ShutdownModule {}
