import { AppError, ErrorCode } from '../common/app-error';
import type { KeptOutputs } from '../engine/workflow-executor';
import type { LeaseState, RunStore } from '../domain/run-store.port';
import type { StepRecord } from '../domain/step.model';

interface PendingStep {
  step: StepRecord;
  kept?: KeptOutputs;
}

/**
 * How long a step that nothing waits for (a skipped node, the trigger, the last node of a run that
 * is still ending) may wait before it is written; a slower run still shows each step at most this
 * late. A finished node's record is written before the next node starts anyway (see `settle`).
 */
export const STEP_FLUSH_DELAY_MS = 200;

/**
 * Buffers a run's steps and writes them in batches while the worker holds the lease. A finished
 * node's record waits at most until the next node starts (`settle`): a node's completion is stored,
 * with its kept outputs sealed into its `state`, before anything after it runs, so a worker that
 * dies later never leaves it to be run again or failed as cut short. The last node's record goes out
 * with the run's final state in one write, and its outputs are sealed only when a later attempt may
 * continue from them: a run that succeeds never pays for the last encryption. Only the latest
 * record of a node waits: the store replaces a node's record by its next one anyway.
 */
export class StepRecorder {
  private pending = new Map<string, PendingStep>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: RunStore,
    private readonly runId: string,
    private readonly owner: string,
    private readonly onLease: (lease: LeaseState) => void,
    private readonly seal: (kept: KeptOutputs) => string | null,
  ) {}

  add(step: StepRecord, kept?: KeptOutputs): void {
    this.pending.set(step.nodeId, { step, kept });
    this.timer ??= setTimeout(() => void this.flush(), STEP_FLUSH_DELAY_MS);
  }

  /** Writes what is buffered; a failed write is retried with the next batch. */
  flush(): Promise<void> {
    this.clearTimer();
    const pending = this.take();
    if (!pending.length) return this.writing;
    this.writing = this.writing.then(async () => {
      try {
        this.onLease(
          await this.store.recordSteps(
            this.runId,
            this.owner,
            pending.map((p) => this.sealed(p)),
          ),
        );
      } catch {
        this.putBack(pending);
      }
    });
    return this.writing;
  }

  /**
   * Writes `step` with everything buffered before it, now, and resolves once it is stored: what
   * a node that must not run twice needs before it starts. Fails when the write fails or the lease
   * is gone, so the node does not start.
   */
  async write(step?: StepRecord): Promise<void> {
    this.clearTimer();
    await this.writing;
    const pending = this.take();
    let lease: LeaseState;
    try {
      lease = await this.store.recordSteps(this.runId, this.owner, [...pending.map((p) => this.sealed(p)), ...(step ? [step] : [])]);
    } catch (error) {
      // The steps that were waiting are still owed to the store; `step` is not, as its node will not start.
      this.putBack(pending);
      throw error;
    }
    this.onLease(lease);
    if (!lease.held) throw new AppError(ErrorCode.UNAVAILABLE, 'The run was taken over by another worker', { retryable: true });
  }

  /**
   * Before the next node starts: resolves once every finished node a resumed run would continue
   * from (kept outputs) or whose failure stands is stored, with what else is buffered. Skipped
   * nodes and the trigger (derived from the run's input again) may wait for the next write.
   * Fails like `write`, and the next node then does not start.
   */
  async settle(): Promise<void> {
    // A batch on its way counts once stored; one that failed is back in the buffer.
    await this.writing;
    if ([...this.pending.values()].some(({ step, kept }) => kept !== undefined || step.status === 'failed')) await this.write();
  }

  /**
   * Waits for writes in progress and hands over what is left, for the final write: sealed when a
   * later attempt may continue from it (the run paused, failed or stopped), bare when it succeeded.
   */
  async drain(keep: boolean): Promise<StepRecord[]> {
    this.clearTimer();
    await this.writing;
    return this.take().map((p) => (keep ? this.sealed(p) : p.step));
  }

  private take(): PendingStep[] {
    const pending = [...this.pending.values()];
    this.pending.clear();
    return pending;
  }

  /** Steps whose write failed wait again, unless a newer record of their node came meanwhile. */
  private putBack(failed: PendingStep[]): void {
    const newer = this.pending;
    this.pending = new Map(failed.map((p) => [p.step.nodeId, p]));
    for (const [nodeId, p] of newer) this.pending.set(nodeId, p);
  }

  private sealed({ step, kept }: PendingStep): StepRecord {
    return kept ? Object.assign({}, step, { state: this.seal(kept) }) : step;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
