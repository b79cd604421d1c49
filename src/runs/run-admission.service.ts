import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AppError, ErrorCode } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { JobQueue, StagedEnqueue } from '../domain/job-queue.port';
import { queueUnavailable } from '../jobs/job-policy';
import { Metrics } from '../metrics/metrics.service';
import { QueuedFilter, QueuedRuns, RunStore } from '../domain/run-store.port';
import { WorkflowStore } from '../domain/workflow-store.port';
import type { Workflow, WorkflowSettings } from '../domain/workflow.model';
import { userInForce } from './run-actors';
import { RUN_JOB, runJob, RunJobData, runJobOptions } from './run.job';
import { newQueuedRun, Run, runOf, RunTrigger } from '../domain/run.model';

/** How long an Idempotency-Key (or a schedule tick's key) keeps naming the run it started. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Bounds of the Retry-After of a refusal: the queue's age, but never 0 and never minutes. */
const RETRY_AFTER_MIN_S = 1;
const RETRY_AFTER_MAX_S = 60;
/**
 * How long one store count serves the admissions after it, in this process, with the runs this
 * process admitted since added: counting on every call was, at the limit, a twentieth of the CPU of
 * a process under load, CPU its workers need. Runs that started meanwhile are still counted, so the
 * error is on the side of refusing, for at most this long.
 */
const COUNT_FRESH_MS = 100;
/** Cached counts kept for this many workflows at most; older entries go first. */
const COUNT_CACHE_SIZE = 1_000;

interface CachedCount extends QueuedRuns {
  readAt: number;
}

/** Retry-After when the queue backend did not answer: about how long a Redis failover takes to notice. */
const QUEUE_DOWN_RETRY_AFTER_S = 5;

/**
 * How a run is admitted, by who starts it:
 * - `caller` (webhook, REST, MCP tool): held to the queued-run limits, refused beyond them (429 for
 *   its workflow's and its acting user's share, 503 for the service's); if the queue does not take its job in time, the run is
 *   withdrawn and the caller told 503: nothing runs that the caller was told was refused.
 * - `schedule`: held to the limits too; a refused tick is skipped (logged, counted), the next tick
 *   comes. A queue that does not answer keeps the run for the reconciler.
 * - `service` (an error workflow): always admitted, kept for the reconciler if the queue is down:
 *   the failure it reports already happened, and refusing it would lose the report.
 * Runs already admitted never come back here: a resume after a wait, a reconciler's re-enqueue and
 * a sub-workflow run (claimed in line by its parent) are not held to the limits.
 */
export type AdmissionPolicy = 'caller' | 'schedule' | 'service';

/** Why a run was not admitted, as the `reason` label of workflow_runs_refused_total and `details.reason`. */
type RefusalReason = 'workflow-queue-limit' | 'user-queue-limit' | 'global-queue-limit' | 'queue-unavailable';

/**
 * Where every run enters the run-time, whoever starts it (webhook, MCP tool, retry, schedule):
 * admission control first (queued-run limits, counted in the store: every process sharing it sees
 * the same answer), then the run is written as queued with its job in the same write where the
 * queue's jobs commit with the runs (SQLite, a caller's run), else before its job is enqueued (Bull,
 * MongoDB), so no job ever names a run the store lacks.
 */
/**
 * Starts the keys of the runs the service starts itself: callers' keys are visible ASCII only
 * (no space), so none can be one of these.
 */
const SERVICE_KEY_PREFIX = 'service ';

@Injectable()
export class RunAdmission {
  private readonly logger: Logger;
  private readonly maxQueued: number;
  private readonly maxQueuedPerWorkflow: number;
  private readonly maxQueuedPerUser: number;
  private readonly enqueueTimeoutMs: number;
  private readonly refusalDelayMs: number;
  /** Queued runs per workflow id, per acting user under `user:<id>`, and of all under '', as last counted in the store. */
  private readonly counts = new Map<string, CachedCount>();

  constructor(
    private readonly runs: RunStore,
    private readonly workflows: WorkflowStore,
    private readonly jobs: JobQueue,
    @Inject(ROOT_LOGGER) logger: Logger,
    config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.logger = logger.child({ component: 'runs' });
    this.maxQueued = config.RUNS_MAX_QUEUED;
    this.maxQueuedPerWorkflow = config.RUNS_MAX_QUEUED_PER_WORKFLOW;
    this.maxQueuedPerUser = config.RUNS_MAX_QUEUED_PER_USER;
    this.enqueueTimeoutMs = config.RUNS_ENQUEUE_TIMEOUT_MS;
    this.refusalDelayMs = config.RUNS_REFUSAL_DELAY_MS ?? 0;
  }

  /**
   * `created: false` when an idempotency key matched an earlier run, which is returned instead.
   * `settings` are those of the run's workflow (its maxQueuedRuns).
   * @throws AppError RATE_LIMITED (429) beyond the workflow's or the acting user's queued-run limit, UNAVAILABLE (503)
   * beyond the service's or when the queue does not take the job in time (caller runs); both carry
   * `retryAfterSeconds`
   */
  async accept(run: Run, policy: AdmissionPolicy = 'caller', settings: WorkflowSettings = {}): Promise<{ created: boolean; run: Run }> {
    const reuseSince = new Date(run.createdAt.getTime() - IDEMPOTENCY_WINDOW_MS);
    if (policy !== 'service') {
      const refusal = await this.limitRefusal(run, settings);
      if (refusal) {
        // A repeated Idempotency-Key names a run already accepted: the answer is that run, even at a limit.
        const earlier = run.idempotencyKey ? await this.runs.byIdempotencyKey(run.workflowId, run.idempotencyKey, reuseSince) : null;
        if (earlier) return { created: false, run: earlier };
        this.refused(run, policy, refusal.reason);
        await this.holdRefusal(policy, refusal.oldestCreatedAt);
        throw refusal.error;
      }
    }
    // A caller's run and its job in one write where the queue's jobs commit with the runs (SQLite):
    // one commit where there were two, and never a run without its job, nor a run to withdraw.
    const staged =
      policy === 'caller' && this.runs.createWith
        ? this.jobs.stage?.<RunJobData>(RUN_JOB, runJob(run), runJobOptions(run, run.id))
        : undefined;
    if (staged) return this.createWithJob(run, reuseSince, staged);
    const stored = await this.runs.create(run, reuseSince);
    if (!stored.created) return stored;
    this.admitted(run);
    try {
      await this.enqueueWithin(run);
    } catch (error) {
      if (policy === 'caller' && (await this.runs.discardQueued(run.id))) {
        throw this.queueRefusal(run, error, "the queue did not take the run's job in time: run withdrawn, caller answered 503");
      }
      // A worker claimed it meanwhile (the job did get through), or the service must keep it.
      this.logger.warn({ runId: run.id, err: error }, 'run is queued in the store but its job was not; the reconciler will enqueue it');
    }
    return stored;
  }

  /** The run's write inserts its job too (JobQueue.stage, RunStore.createWith); a job that cannot be stored undoes the run. */
  private async createWithJob(run: Run, reuseSince: Date, staged: StagedEnqueue): Promise<{ created: boolean; run: Run }> {
    let jobError: unknown;
    let stored: { created: boolean; run: Run };
    try {
      stored = await this.runs.createWith!(run, reuseSince, () => {
        try {
          staged.write();
        } catch (error) {
          jobError = error;
          throw error;
        }
      });
    } catch (error) {
      staged.undone();
      if (jobError === undefined || error !== jobError) throw error;
      throw this.queueRefusal(run, error, "the run's job could not be stored: nothing stored, caller answered 503");
    }
    if (!stored.created) {
      staged.undone();
      return stored;
    }
    this.admitted(run);
    staged.committed();
    return stored;
  }

  /** A caller's run left unstarted because the queue did not take its job: 503, the caller may retry. */
  private queueRefusal(run: Run, error: unknown, message: string): AppError {
    this.refused(run, 'caller', 'queue-unavailable');
    this.logger.warn({ runId: run.id, workflowId: run.workflowId, err: error }, message);
    return new AppError(
      ErrorCode.UNAVAILABLE,
      `The run queue does not answer: no run was started; try again in ${QUEUE_DOWN_RETRY_AFTER_S} s`,
      {
        details: { reason: 'queue-unavailable' satisfies RefusalReason, retryAfterSeconds: QUEUE_DOWN_RETRY_AFTER_S },
        cause: error,
        retryable: true,
      },
    );
  }

  /**
   * A run the service starts on its own (a schedule's tick, an error workflow) of the workflow's
   * published version. Nobody calls: it acts as the user who put that version in force (published
   * or activated it), never as the owner by default. The key makes every process that sees the same
   * event start one run; it is kept in a namespace of its own (SERVICE_KEY_PREFIX), so no caller's
   * `Idempotency-Key` can take a tick's or a failure's run in advance.
   */
  async startForService(
    workflow: Workflow,
    trigger: RunTrigger,
    input: unknown,
    idempotencyKey: string,
    now = new Date(),
  ): Promise<{ created: boolean; run: Run }> {
    const actingUserId = await userInForce(this.workflows, workflow, 'production');
    if (!actingUserId) throw new Error(`workflow ${workflow.id} has no version in force`);
    const run = newQueuedRun(
      {
        ...runOf(workflow, 'production'),
        input,
        trigger,
        startedBy: actingUserId,
        actingUserId,
        idempotencyKey: SERVICE_KEY_PREFIX + idempotencyKey,
      },
      now,
    );
    return this.accept(run, trigger === 'schedule' ? 'schedule' : 'service', workflow.settings);
  }

  /** The workflow's limit: the service's, lowered by the workflow's settings.maxQueuedRuns (0: none). */
  workflowLimit(settings: WorkflowSettings): number {
    const own = settings.maxQueuedRuns;
    if (own === undefined) return this.maxQueuedPerWorkflow;
    return this.maxQueuedPerWorkflow === 0 ? own : Math.min(own, this.maxQueuedPerWorkflow);
  }

  /**
   * Counted in the store, the one place every API process and worker shares, with bounded index
   * reads (a count stops at the limit), read at most every COUNT_FRESH_MS by each process. Two
   * callers counting at once may both take the last place, and other processes' admissions show
   * after that long, so a limit can be passed by the runs admitted in that instant: a bound on the
   * backlog, not an exact quota.
   */
  private async limitRefusal(
    run: Run,
    settings: WorkflowSettings,
  ): Promise<{ reason: RefusalReason; retryAfterSeconds: number; oldestCreatedAt: Date | null; error: AppError } | null> {
    const workflowLimit = this.workflowLimit(settings);
    const userLimit = this.maxQueuedPerUser;
    const [mine, users, all] = await Promise.all([
      workflowLimit > 0 ? this.queued(run.workflowId, { workflowId: run.workflowId }, workflowLimit) : undefined,
      userLimit > 0 ? this.queued(userKey(run), { actingUserId: run.actingUserId }, userLimit) : undefined,
      this.maxQueued > 0 ? this.queued('', {}, this.maxQueued) : undefined,
    ]);
    if (mine && mine.count >= workflowLimit) {
      const { oldestCreatedAt } = mine;
      const retryAfterSeconds = retryAfter(oldestCreatedAt);
      const reason = 'workflow-queue-limit';
      const error = new AppError(
        ErrorCode.RATE_LIMITED,
        `Workflow ${run.workflowId} has ${workflowLimit} run(s) queued, its limit: no run was started; try again in ${retryAfterSeconds} s`,
        { details: { reason, limit: workflowLimit, queued: mine.count, retryAfterSeconds }, retryable: true },
      );
      return { reason, retryAfterSeconds, oldestCreatedAt, error };
    }
    // Before the service's limit: one user's backlog meets its own 429 and leaves the rest to others.
    if (users && users.count >= userLimit) {
      const { oldestCreatedAt } = users;
      const retryAfterSeconds = retryAfter(oldestCreatedAt);
      const reason = 'user-queue-limit';
      const error = new AppError(
        ErrorCode.RATE_LIMITED,
        `User ${run.actingUserId}, whose rights this run would use, has ${userLimit} run(s) queued, their limit (RUNS_MAX_QUEUED_PER_USER): no run was started; try again in ${retryAfterSeconds} s`,
        { details: { reason, limit: userLimit, queued: users.count, actingUserId: run.actingUserId, retryAfterSeconds }, retryable: true },
      );
      return { reason, retryAfterSeconds, oldestCreatedAt, error };
    }
    if (all && all.count >= this.maxQueued) {
      const { oldestCreatedAt } = all;
      const retryAfterSeconds = retryAfter(oldestCreatedAt);
      const reason = 'global-queue-limit';
      const error = new AppError(
        ErrorCode.UNAVAILABLE,
        `The service has ${this.maxQueued} runs queued, its limit (RUNS_MAX_QUEUED): no run was started; try again in ${retryAfterSeconds} s`,
        {
          details: { reason, limit: this.maxQueued, queued: all.count, retryAfterSeconds },
          retryable: true,
        },
      );
      return { reason, retryAfterSeconds, oldestCreatedAt, error };
    }
    return null;
  }

  /** The store's count (under `key` in the cache), or the fresh one this process read, with its own admissions since. */
  private async queued(key: string, filter: QueuedFilter, upTo: number): Promise<QueuedRuns> {
    const now = Date.now();
    const cached = this.counts.get(key);
    if (cached && now - cached.readAt < COUNT_FRESH_MS) return cached;
    const counted = await this.runs.queued(filter, upTo);
    if (this.counts.size >= COUNT_CACHE_SIZE) this.counts.delete(this.counts.keys().next().value!);
    this.counts.delete(key);
    this.counts.set(key, { ...counted, readAt: now });
    return counted;
  }

  private admitted(run: Run): void {
    for (const key of [run.workflowId, userKey(run), '']) {
      const cached = this.counts.get(key);
      if (cached) cached.count++;
    }
  }

  /**
   * Bull keeps commands while Redis is unreachable and sends them when it is back, so an enqueue can
   * hang for as long as the outage: it is given a deadline. A job that still reaches the queue after
   * it finds its run withdrawn, and its worker does nothing.
   */
  private async enqueueWithin(run: Run): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(queueUnavailable(new Error(`no answer within ${this.enqueueTimeoutMs} ms`))), this.enqueueTimeoutMs);
    });
    const enqueued = this.jobs.enqueue<RunJobData>(RUN_JOB, runJob(run), runJobOptions(run, run.id));
    enqueued.catch(() => undefined);
    try {
      await Promise.race([enqueued, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A caller over a limit is answered after a hold (refusalHoldMs): a client looping on refusals
   * would otherwise take, one cheap 429 after another, the event loop the workers share, and the
   * queue it waits on would drain at a tenth of its speed (docs/operations.md, Backpressure). A
   * timer holds nothing but the connection.
   */
  private async holdRefusal(policy: AdmissionPolicy, oldestCreatedAt: Date | null): Promise<void> {
    const ms = refusalHoldMs(this.refusalDelayMs, oldestCreatedAt);
    if (policy !== 'caller' || ms <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  private refused(run: Run, policy: AdmissionPolicy, reason: RefusalReason): void {
    this.metrics.runRefused(reason, policy === 'caller' ? run.trigger : policy);
  }
}

/** Workflow ids never contain ':', so a user's count cannot collide with a workflow's. */
const userKey = (run: Pick<Run, 'actingUserId'>): string => `user:${run.actingUserId}`;

/** The shortest hold of a refusal: a caller looping on refusals sends at most ten a second. */
export const REFUSAL_HOLD_MIN_MS = 100;

/**
 * How long a refusal is held before it is answered: half the age of the oldest queued run it met,
 * at least REFUSAL_HOLD_MIN_MS and at most `delayMs` (RUNS_REFUSAL_DELAY_MS; 0 holds nothing). A
 * caller that loops on refusals comes back while the backlog it met is about half worked through,
 * so the queue still holds runs for the workers: a fixed hold longer than the backlog's age (a
 * second against a backlog worked through in half that) left them idle for the rest of it.
 */
export function refusalHoldMs(delayMs: number, oldestCreatedAt: Date | null, now = Date.now()): number {
  if (delayMs <= 0) return 0;
  const halfAge = oldestCreatedAt ? (now - oldestCreatedAt.getTime()) / 2 : 0;
  return Math.round(Math.min(delayMs, Math.max(REFUSAL_HOLD_MIN_MS, halfAge)));
}

/**
 * The age of the oldest queued run: a run admitted now starts after about that long, so a caller
 * retrying then finds the backlog it met worked through.
 */
function retryAfter(oldestCreatedAt: Date | null): number {
  const ageSeconds = oldestCreatedAt ? (Date.now() - oldestCreatedAt.getTime()) / 1000 : 0;
  return Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, Math.ceil(ageSeconds)));
}
