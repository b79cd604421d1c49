import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { RunProgress } from '../engine/executor/run-contract';

/** What a running node reports before it ends: a finished sub-step, or a token of a streamed answer. */
export type RunProgressEvent = RunProgress;

/**
 * Runs that reached a terminal state in this process, for callers waiting on them here (the
 * webhook's `?wait=`, MCP tool calls): they wake at once instead of at their next look at the store.
 */
@Injectable()
export class RunEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  private readonly progressEmitter = new EventEmitter().setMaxListeners(0);

  /** A node of `runId` running in this process made progress (a chat stream forwards it). */
  progress(runId: string, event: RunProgressEvent): void {
    this.progressEmitter.emit(runId, event);
  }

  /** Listens to the progress of `runId` in this process; call the answer to stop listening. */
  onProgress(runId: string, listener: (event: RunProgressEvent) => void): () => void {
    this.progressEmitter.on(runId, listener);
    return () => this.progressEmitter.off(runId, listener);
  }

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
