import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';

/**
 * Runs that reached a terminal state in this process, for callers waiting on them here (the
 * webhook's `?wait=`, MCP tool calls): they wake at once instead of at their next look at the store.
 */
@Injectable()
export class RunEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  finished(runId: string): void {
    this.emitter.emit(runId);
  }

  /** Resolves when `runId` finishes here, `ms` pass or `signal` aborts, whichever is first. */
  nextFinish(runId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(runId, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.emitter.once(runId, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
