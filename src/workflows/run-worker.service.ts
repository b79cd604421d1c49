import { Inject, Injectable } from '@nestjs/common';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError, ErrorCode, isAppError } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { Redactor } from '../engine/redactor';
import { RunInterrupt } from '../engine/run-interrupt';
import { WorkflowExecutor } from '../engine/workflow-executor';
import { JobContext } from '../jobs/job-queue.port';
import { LeaseState, Run, RunError, RunStore } from '../storage/ports/run-store.port';
import { ActiveRuns } from './active-runs';
import { RunPlans } from './run-plans';
import { RunJobData } from './runs.service';
import { StepRecorder } from './step-recorder';

/** Renewal also carries cancel requests made through another process: at least this often. */
const MAX_RENEW_INTERVAL_MS = 5_000;

/**
 * Executes `workflow.run` jobs: claims the run (running, with a lease), runs its plan, records
 * steps as they finish and the terminal state at the end. A job is only a pointer to a run; the
 * run's state in the store decides what happens, so a duplicate or late job is harmless.
 */
@Injectable()
export class RunWorker {
  /** Identifies this process in leases. */
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  /** A worker that stops renewing (it died) loses its runs this long after its last renewal (JOB_LEASE_MS). */
  private readonly leaseMs: number;
  private readonly renewEveryMs: number;
  private readonly logger: Logger;

  constructor(
    config: AppConfig,
    private readonly runs: RunStore,
    private readonly plans: RunPlans,
    private readonly executor: WorkflowExecutor,
    private readonly active: ActiveRuns,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.leaseMs = config.JOB_LEASE_MS;
    this.renewEveryMs = Math.min(MAX_RENEW_INTERVAL_MS, Math.floor(this.leaseMs / 3));
    this.logger = logger.child({ component: 'runs' });
  }

  async handle(job: JobContext<RunJobData>): Promise<void> {
    const runId = job.data?.runId;
    if (typeof runId !== 'string') throw new AppError(ErrorCode.VALIDATION_FAILED, `job ${job.id} names no run`);
    // Reserved before the claim: a second delivery of the run's job to this process must not claim
    // it again (a re-claim by the same owner succeeds, and would restart the run under our feet).
    const controller = new AbortController();
    if (!this.active.start(runId, controller)) return;
    try {
      const run = await this.runs.claim(runId, this.workerId, this.leaseUntil(), new Date());
      // Finished, canceled, deleted, or running under a live lease elsewhere: nothing to do.
      if (run) await this.execute(run, controller, job.signal);
    } finally {
      this.active.finish(runId, controller);
    }
  }

  private async execute(run: Run, controller: AbortController, shutdown: AbortSignal): Promise<void> {
    const log = this.logger.child({ runId: run.id, workflowId: run.workflowId });
    let leaseLost = false;
    const onLease = (lease: LeaseState) => {
      if (!lease.held) {
        leaseLost = true;
        controller.abort(new RunInterrupt('shutdown', 'Another worker took the run over'));
      } else if (lease.cancelRequested) {
        controller.abort(new RunInterrupt('canceled', 'The run was canceled'));
      }
    };
    const onShutdown = () => controller.abort(new RunInterrupt('shutdown', 'The worker is stopping'));
    shutdown.addEventListener('abort', onShutdown, { once: true });
    const heartbeat = setInterval(() => {
      this.runs.renewLease(run.id, this.workerId, this.leaseUntil()).then(onLease, (error: Error) => log.warn({ err: error }, 'lease renewal failed'));
    }, this.renewEveryMs);
    heartbeat.unref();
    if (run.cancelRequested) onLease({ held: true, cancelRequested: true });
    const recorder = new StepRecorder(this.runs, run.id, this.workerId, onLease);
    const started = Date.now();
    let redactor = Redactor.NONE;
    try {
      const prepared = await this.plans.forRun(run).catch((error: unknown) => {
        throw new PreparationError(error);
      });
      redactor = prepared.redactor;
      const outcome = await this.executor.run(
        prepared.plan,
        {
          runId: run.id,
          workflowId: run.workflowId,
          actingUserId: run.actingUserId,
          input: run.input,
          variables: prepared.variables,
          redactor,
          signal: controller.signal,
        },
        (step) => recorder.add(step),
      );
      if (outcome.status === 'interrupted') {
        await recorder.drain();
        if (leaseLost) return;
        await this.runs.release(run.id, this.workerId);
        log.info('run handed back: the worker is stopping');
        throw shutdown.reason ?? new AppError(ErrorCode.UNAVAILABLE, 'The worker is stopping', { retryable: true });
      }
      await this.complete(run, await recorder.drain(), outcome.status, outcome.error);
      log.info({ status: outcome.status, ms: Date.now() - started, attempt: run.claims }, 'run finished');
    } catch (error) {
      if (!(error instanceof PreparationError)) throw error;
      // The run cannot start (a node type is gone, a secret does not decrypt): that is its outcome.
      const cause = error.cause;
      const runError: RunError = isAppError(cause)
        ? { code: cause.code, message: redactor.string(cause.message), ...(cause.details !== undefined ? { details: cause.details } : {}) }
        : { code: ErrorCode.INTERNAL, message: 'The run could not be prepared' };
      if (!isAppError(cause)) log.error({ err: cause }, 'run preparation failed');
      await this.complete(run, await recorder.drain(), 'failed', runError);
      log.info({ status: 'failed', code: runError.code }, 'run finished');
    } finally {
      clearInterval(heartbeat);
      shutdown.removeEventListener('abort', onShutdown);
    }
  }

  private async complete(run: Run, steps: Parameters<RunStore['complete']>[2], status: 'succeeded' | 'failed' | 'canceled', error: RunError | null): Promise<void> {
    await this.runs.complete(run.id, this.workerId, steps, { status, error, finishedAt: new Date() });
  }

  private leaseUntil(): Date {
    return new Date(Date.now() + this.leaseMs);
  }
}

class PreparationError extends Error {
  constructor(override readonly cause: unknown) {
    super('run preparation failed');
  }
}
