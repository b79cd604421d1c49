import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { Notice, processNotices } from '../common/process-notices';
import type { RunProgress } from '../engine/executor/run-contract';

/** What a running node reports before it ends: a finished sub-step, or a token of a streamed answer. */
export type RunProgressEvent = RunProgress;

/**
 * Runs that reached a terminal state or made progress, for callers waiting on them (the webhook's
 * `?wait=`, chat, MCP tool calls): they wake at once instead of at their next look at the store.
 * Runs of the other processes of one `npm start` (its worker processes) are heard through
 * process-notices.ts, for the runs a caller here watches.
 */
@Injectable()
export class RunEvents implements OnModuleDestroy {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  private readonly progressEmitter = new EventEmitter().setMaxListeners(0);

  private readonly unsubscribe = processNotices.subscribe((notice) => this.heard(notice));

  /** A node of `runId` running in this process made progress (a chat stream forwards it). */
  progress(runId: string, event: RunProgressEvent): void {
    this.progressEmitter.emit(runId, event);
    processNotices.publish({ runId, kind: 'progress', event });
  }

  /** Listens to the progress of `runId`, here or in another process; call the answer to stop listening. */
  onProgress(runId: string, listener: (event: RunProgressEvent) => void): () => void {
    this.progressEmitter.on(runId, listener);
    const unwatch = processNotices.watch(runId);
    return () => {
      this.progressEmitter.off(runId, listener);
      unwatch();
    };
  }

  /**
   * Asks the other processes to tell this one when `runId` finishes or makes progress, until the
   * answer is called: a caller that watches before it first looks at the store misses nothing.
   */
  watch(runId: string): () => void {
    return processNotices.watch(runId);
  }

  finished(runId: string): void {
    this.emitter.emit(runId);
    processNotices.publish({ runId, kind: 'finished' });
  }

  /** Resolves when `runId` finishes (here or in another process), `ms` pass or `signal` aborts, whichever is first. */
  nextFinish(runId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const unwatch = processNotices.watch(runId);
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(runId, done);
        signal?.removeEventListener('abort', done);
        unwatch();
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.emitter.once(runId, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }

  private heard(notice: Notice): void {
    if (notice.kind === 'finished') this.emitter.emit(notice.runId);
    else this.progressEmitter.emit(notice.runId, notice.event as RunProgressEvent);
  }
}
