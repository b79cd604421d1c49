import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ErrorCode } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { JobQueue } from '../domain/job-queue.port';
import { PeriodicReconciler } from '../jobs/periodic-reconciler';
import { Metrics } from '../metrics/metrics.service';
import { Run } from '../domain/run.model';
import { RunCursor, RunStore } from '../domain/run-store.port';
import { RunEvents } from './run-events';
import { RUN_JOB, runJob, RunJobData, runJobOptions } from './run.job';

export interface ReconcilerOptions {
  intervalMs: number;
  /** A queued run younger than this may be between its insert and its enqueue: leave it. */
  queuedGraceMs: number;
  /** Claims after which a run that keeps losing its worker is failed rather than tried again. */
  maxClaims: number;
  batchSize: number;
}

export const RECONCILER_OPTIONS = Symbol('RECONCILER_OPTIONS');
export const DEFAULT_RECONCILER_OPTIONS: ReconcilerOptions = { intervalMs: 10_000, queuedGraceMs: 30_000, maxClaims: 3, batchSize: 100 };

/**
 * Runs: a queued run whose job is gone (the queue lost it, or enqueue failed after the insert) is
 * enqueued again, and a running run whose lease expired (its worker died) is put back in the
 * queue, or failed after `maxClaims` lost workers. Queued and waiting runs are read a page per
 * pass, each pass after where the last one stopped, so a backlog of runs whose jobs are fine (runs
 * parked at a concurrency limit) cannot hide the ones behind it.
 */
@Injectable()
export class RunsReconciler extends PeriodicReconciler {
  /** Where the next pass reads queued and due waiting runs from; undefined: from the oldest. */
  private queuedAfter?: RunCursor;
  private waitingAfter?: RunCursor;

  constructor(
    private readonly runs: RunStore,
    private readonly jobs: JobQueue,
    @Inject(ROOT_LOGGER) logger: Logger,
    @Inject(RECONCILER_OPTIONS) private readonly options: ReconcilerOptions,
    private readonly metrics: Metrics,
    private readonly events: RunEvents,
  ) {
    super(logger.child({ component: 'runs-reconciler' }), options.intervalMs);
  }

  protected async reconcileOnce(now: Date): Promise<void> {
    const { batchSize } = this.options;
    const settled = new Date(now.getTime() - this.options.queuedGraceMs);
    const queued = await this.runs.listQueued(settled, batchSize, this.queuedAfter);
    for (const run of queued) await (run.parentRunId ? this.endOrphanedChild(run, now) : this.ensureJob(run));
    this.queuedAfter = queued.length < batchSize ? undefined : { at: queued.at(-1)!.createdAt, id: queued.at(-1)!.id };
    // A waiting run due for a while whose delayed job is gone (enqueue failed, queue lost it).
    const waiting = await this.runs.listDueWaiting(settled, batchSize, this.waitingAfter);
    for (const run of waiting) await this.ensureJob(run);
    this.waitingAfter = waiting.length < batchSize ? undefined : { at: waiting.at(-1)!.resumeAt!, id: waiting.at(-1)!.id };
    const expired = await this.runs.listExpiredLeases(now, this.options.batchSize);
    for (const run of expired) await this.recover(run, now);
  }

  private async ensureJob(run: Run): Promise<void> {
    const state = await this.jobs.state(RUN_JOB, run.jobId);
    if (state === 'waiting' || state === 'active') return;
    // A finished or stuck job's id cannot be reused while the queue remembers it: give the run a new one.
    let jobId = run.jobId;
    if (state !== 'missing') {
      jobId = `${run.id}.q${Date.now().toString(36)}`;
      await this.runs.setJobId(run.id, jobId);
    }
    await this.jobs.enqueue<RunJobData>(RUN_JOB, runJob(run), runJobOptions(run, jobId));
    this.logger.info({ runId: run.id, jobId, jobState: state, status: run.status }, 'run had no job: enqueued it again');
  }

  /**
   * A sub-workflow run is executed in line by the node that started it, never from the queue: one
   * left behind by a lost worker is ended, as when that node stops in a process that goes on. Run
   * on its own it would do its work detached from its parent, whose node fails as interrupted
   * (and a retry of the parent from that node would start a second child).
   */
  private async endOrphanedChild(run: Run, now: Date): Promise<void> {
    const error = { code: ErrorCode.INTERRUPTED, message: 'The node that started this sub-workflow run stopped before the run finished' };
    if (!(await this.runs.abandon(run.id, error, now))) return;
    this.ended(run);
    this.logger.warn({ runId: run.id, parentRunId: run.parentRunId }, 'sub-workflow run failed: the worker running its parent was lost');
  }

  private async recover(run: Run, now: Date): Promise<void> {
    if (run.parentRunId) return this.endOrphanedChild(run, now);
    // This loss included: the resumes of a run that waits are no losses.
    const losses = run.leaseLosses + 1;
    if (losses >= this.options.maxClaims) {
      const abandoned = await this.runs.abandon(
        run.id,
        { code: ErrorCode.UNAVAILABLE, message: `The run lost its worker ${losses} times and was given up` },
        now,
      );
      if (abandoned) {
        this.ended(run);
        this.logger.warn({ runId: run.id, leaseLosses: losses }, 'run failed: its workers kept stopping');
      }
      return;
    }
    const jobId = `${run.id}.r${run.claims}`;
    if (!(await this.runs.requeueExpired(run.id, run.leaseOwner, jobId, now))) return;
    await this.jobs.enqueue<RunJobData>(RUN_JOB, runJob(run), runJobOptions(run, jobId));
    this.logger.warn({ runId: run.id, lostWorker: run.leaseOwner, jobId }, 'run lost its worker: queued again');
  }

  /** A run failed here: counted, and its waiters (`?wait`, chat, a parent's node) told now, not at their next look. */
  private ended(run: Run): void {
    this.metrics.runFinished('failed');
    this.events.finished(run.id);
  }
}
