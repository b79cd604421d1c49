import { Injectable } from '@nestjs/common';
import { RunInterrupt } from '../engine/run-interrupt';

/**
 * Runs this process is executing, so a cancel received by the API of the same process stops its
 * run at once; other processes see the cancel flag in the store at their next lease renewal.
 */
@Injectable()
export class ActiveRuns {
  private readonly handlers = new Map<string, { controller: AbortController; done: Promise<void>; resolve: () => void }>();

  /** False when the run is already being worked on here (see `settled`). */
  start(runId: string, controller: AbortController): boolean {
    if (this.handlers.has(runId)) return false;
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.handlers.set(runId, { controller, done, resolve });
    return true;
  }

  /** Whether a handler here works on the run. */
  has(runId: string): boolean {
    return this.handlers.has(runId);
  }

  finish(runId: string, controller: AbortController): void {
    const handler = this.handlers.get(runId);
    if (handler?.controller !== controller) return;
    this.handlers.delete(runId);
    handler.resolve();
  }

  /** Resolves when the run's handler here is done (at once when there is none). */
  settled(runId: string): Promise<void> {
    return this.handlers.get(runId)?.done ?? Promise.resolve();
  }

  cancel(runId: string): void {
    this.handlers.get(runId)?.controller.abort(new RunInterrupt('canceled', 'The run was canceled'));
  }
}
