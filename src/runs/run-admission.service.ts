import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../common/logger';
import { JobQueue } from '../jobs/job-queue.port';
import { RunStore } from '../storage/run-store.port';
import { WorkflowStore } from '../storage/workflow-store.port';
import type { Workflow } from '../workflows/workflow.model';
import { RUN_JOB, RUN_JOB_OPTIONS, runJob, RunJobData } from './run.job';
import { newQueuedRun, Run, runOf, RunTrigger } from './run.model';

/** How long an Idempotency-Key (or a schedule tick's key) keeps naming the run it started. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Where every run enters the run-time, whoever starts it (webhook, MCP tool, retry, schedule):
 * the run is written as queued and only then its job enqueued, so no job ever names a run the
 * store lacks. If the queue refuses the job, the run stays queued and the reconciler enqueues it
 * once the queue is back: accepted means kept.
 */
@Injectable()
export class RunAdmission {
  private readonly logger: Logger;

  constructor(
    private readonly runs: RunStore,
    private readonly workflows: WorkflowStore,
    private readonly jobs: JobQueue,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'runs' });
  }

  /** `created: false` when an idempotency key matched an earlier run, which is returned instead. */
  async accept(run: Run): Promise<{ created: boolean; run: Run }> {
    const stored = await this.runs.create(run, new Date(run.createdAt.getTime() - IDEMPOTENCY_WINDOW_MS));
    if (stored.created) {
      try {
        await this.jobs.enqueue<RunJobData>(RUN_JOB, runJob(run), { jobId: run.id, ...RUN_JOB_OPTIONS });
      } catch (error) {
        this.logger.warn({ runId: run.id, err: error }, 'run is queued in the store but its job was not; the reconciler will enqueue it');
      }
    }
    return stored;
  }

  /**
   * A run the service starts on its own (a schedule's tick, an error workflow) of the workflow's
   * published version. Nobody calls: it acts as the user who put that version in force (published
   * or activated it), never as the owner by default. The key makes every process that sees the same
   * event start one run.
   */
  async startForService(workflow: Workflow, trigger: RunTrigger, input: unknown, idempotencyKey: string, now = new Date()): Promise<{ created: boolean; run: Run }> {
    const actingUserId = workflow.activatedBy ?? (await this.workflows.getVersionById(workflow.activeVersionId ?? ''))?.createdBy;
    if (!actingUserId) throw new Error(`workflow ${workflow.id} has no version in force`);
    return this.accept(newQueuedRun({ ...runOf(workflow, 'production'), input, trigger, startedBy: actingUserId, actingUserId, idempotencyKey }, now));
  }
}
