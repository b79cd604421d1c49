import { Injectable } from '@nestjs/common';
import { RunInterrupt } from '../engine/run-interrupt';

/**
 * Runs this process is executing, so a cancel received by the API of the same process stops its
 * run at once; other processes see the cancel flag in the store at their next lease renewal.
 */
@Injectable()
export class ActiveRuns {
  private readonly controllers = new Map<string, AbortController>();

  /** False when the run is already being worked on here (a duplicate delivery of its job). */
  start(runId: string, controller: AbortController): boolean {
    if (this.controllers.has(runId)) return false;
    this.controllers.set(runId, controller);
    return true;
  }

  finish(runId: string, controller: AbortController): void {
    if (this.controllers.get(runId) === controller) this.controllers.delete(runId);
  }

  cancel(runId: string): void {
    this.controllers.get(runId)?.abort(new RunInterrupt('canceled', 'The run was canceled'));
  }
}
