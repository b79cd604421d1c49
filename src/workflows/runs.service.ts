import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { Page, PageRequest } from '../common/pagination';
import { RUN_JOB } from '../jobs/job-names';
import { JobQueue } from '../jobs/job-queue.port';
import { newQueuedRun, Run, RUN_TYPES, RunFilter, RunStore, RunType } from '../storage/ports/run-store.port';
import { WorkflowStore } from '../storage/ports/workflow-store.port';
import { ActiveRuns } from './active-runs';
import { acceptedView, runSummaryView, runView } from './workflow-views';

export { RUN_JOB };
export interface RunJobData {
  runId: string;
}
/** Tries of a run's job; the run itself is not retried, the delivery is (see RunWorker). */
export const RUN_JOB_OPTIONS = { attempts: 3, backoffMs: 1000 } as const;

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface AcceptedRun {
  /** False when an Idempotency-Key matched an earlier run, which is returned instead. */
  created: boolean;
  body: ReturnType<typeof acceptedView>;
}

/** Starting, reading and canceling runs; every method checks the caller's role on the workflow. */
@Injectable()
export class RunsService {
  private readonly logger: Logger;

  constructor(
    private readonly runs: RunStore,
    private readonly workflows: WorkflowStore,
    private readonly access: AccessPolicy,
    private readonly jobs: JobQueue,
    private readonly active: ActiveRuns,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'runs' });
  }

  /**
   * The webhook. Writes the run as queued and only then enqueues it, so no job ever names a run
   * the store lacks; answers without waiting for the run. If the queue refuses the job, the run
   * stays queued and the reconciler enqueues it once the queue is back: accepted means kept.
   */
  async start(principal: Principal, workflowId: string, body: unknown, idempotencyKey?: string): Promise<AcceptedRun> {
    const { runType, input } = parseStartBody(body);
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw AppError.validation([{ field: 'Idempotency-Key', reason: 'must be 1 to 255 visible ASCII characters' }]);
    }
    await this.access.require(principal, 'workflow', workflowId, 'editor');
    const workflow = await this.workflows.get(workflowId);
    if (!workflow) throw AppError.notFound('workflow', workflowId);
    if (runType === 'production' && !workflow.activeVersionId) {
      throw AppError.conflict(`Workflow ${workflowId} has no published version: publish it, or start a test run`);
    }
    const now = new Date();
    const run = newQueuedRun(
      {
        workflowId,
        runType,
        versionId: runType === 'production' ? workflow.activeVersionId : null,
        version: runType === 'production' ? workflow.activeVersion : null,
        definition: runType === 'test' ? workflow.draft : null,
        input,
        startedBy: principal.userId,
        actingUserId: principal.userId,
        idempotencyKey: idempotencyKey ?? null,
      },
      now,
    );
    const id = run.id;
    const stored = await this.runs.create(run, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS));
    if (stored.created) {
      try {
        await this.jobs.enqueue<RunJobData>(RUN_JOB, { runId: id }, { jobId: id, ...RUN_JOB_OPTIONS });
      } catch (error) {
        this.logger.warn({ runId: id, err: error }, 'run is queued in the store but its job was not; the reconciler will enqueue it');
      }
    }
    return { created: stored.created, body: acceptedView(stored.run) };
  }

  async get(principal: Principal, runId: string) {
    return runView(await this.readable(principal, runId, 'viewer'));
  }

  async list(principal: Principal, filter: Omit<RunFilter, 'visibleTo'>, page: PageRequest): Promise<Page<ReturnType<typeof runSummaryView>>> {
    // One workflow: the role check has settled visibility. All of them: the store keeps the user's own.
    if (filter.workflowId) await this.access.require(principal, 'workflow', filter.workflowId, 'viewer');
    const result = await this.runs.list({ ...filter, visibleTo: filter.workflowId ? undefined : principal.userId }, page);
    return { items: result.items.map(runSummaryView), total: result.total };
  }

  /**
   * A queued run is canceled at once; a running one stops at its next step (at once when this
   * process runs it). Canceling a canceled run is a no-op; a finished one cannot be canceled.
   */
  async cancel(principal: Principal, runId: string) {
    const run = await this.readable(principal, runId, 'editor');
    if (run.status === 'succeeded' || run.status === 'failed') {
      throw AppError.conflict(`Run ${runId} already ${run.status}`);
    }
    const updated = await this.runs.requestCancel(runId, new Date());
    if (!updated) throw AppError.notFound('run', runId);
    this.active.cancel(runId);
    return runView(updated);
  }

  /** The run, if the caller holds `role` on its workflow; a run of a hidden workflow is "not found". */
  private async readable(principal: Principal, runId: string, role: 'viewer' | 'editor'): Promise<Run> {
    const run = await this.runs.get(runId);
    if (!run) throw AppError.notFound('run', runId);
    try {
      await this.access.require(principal, 'workflow', run.workflowId, role);
    } catch (error) {
      if (error instanceof AppError && error.code === ErrorCode.NOT_FOUND) throw AppError.notFound('run', runId);
      throw error;
    }
    return run;
  }
}

/** The webhook body is checked by hand: `input` is any JSON value and must reach the run untouched. */
export function parseStartBody(body: unknown): { runType: RunType; input: unknown } {
  if (body === undefined || body === null || body === '') return { runType: 'production', input: undefined };
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw AppError.validation([{ field: 'body', reason: 'must be a JSON object {runType?, input?}' }]);
  }
  const { runType = 'production', input, ...rest } = body as Record<string, unknown>;
  const problems = Object.keys(rest).map((field) => ({ field, reason: 'is not allowed (expected runType and input)' }));
  if (typeof runType !== 'string' || !(RUN_TYPES as readonly string[]).includes(runType)) {
    problems.push({ field: 'runType', reason: `must be one of: ${RUN_TYPES.join(', ')}` });
  }
  if (problems.length) throw AppError.validation(problems);
  return { runType: runType as RunType, input };
}
