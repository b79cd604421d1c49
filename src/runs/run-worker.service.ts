// The life of one claimed run (lease, heartbeat, execute, record, finish) reads top to bottom here;
// what it calls lives in the step recorder, run plans, run actors (who may act) and the executor.
import { Inject, Injectable } from '@nestjs/common';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AccessPolicy } from '../auth/access-policy.service';
import { AppError, ErrorCode, isAppError } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { Redactor } from '../engine/redactor';
import { RunInterrupt } from '../engine/run-interrupt';
import { boundOutput, KeptOutputs, RunOutcome, RunRequest, sealOutputs, StateSealer, WorkflowExecutor } from '../engine/workflow-executor';
import { Metrics } from '../metrics/metrics.service';
import { JobClaiming, JobContext, JobQueue } from '../domain/job-queue.port';
import { OnJob } from '../jobs/on-job.decorator';
import { NodeConfigurationError, WorkflowRunResult, WorkflowsFacade, WorkflowToolInfo } from '../sdk';
import { AT_CONCURRENCY_LIMIT, LeaseState, RunStore } from '../domain/run-store.port';
import { RunActors, userInForce } from './run-actors';
import { RunAdmission } from './run-admission.service';
import { canceledWhileWaiting, newQueuedRun, Run, runOf } from '../domain/run.model';
import { RunError } from '../domain/step.model';
import { WorkflowStore } from '../domain/workflow-store.port';
import { ActiveRuns } from './active-runs';
import { RunEvents } from './run-events';
import { RunPlan, RunPlans } from './run-plans';
import { RUN_JOB, RUN_JOB_OPTIONS, runJob, RunJobData, runJobOptions } from './run.job';
import { SecretCipher } from '../common/secret-cipher';
import { stateSealer } from './state-sealer';
import { StepRecorder } from './step-recorder';
import { WorkflowSettingsCache } from './workflow-settings-cache';
import { ErrorWorkflowStarter, startErrorWorkflow } from './error-workflows';

/** Renewal also carries cancel requests made through another process: at least this often. */
const MAX_RENEW_INTERVAL_MS = 5_000;
/** How deep sub-workflows may nest: a workflow that runs itself stops here. */
export const MAX_SUB_WORKFLOW_DEPTH = 10;
/** A run parked at its workflow's limit, woken when a place frees, also looks again after this (its waker died, the limit rose). */
const PARKED_RECHECK_MS = 60_000;
/** What a sub-workflow run gets as its process's shutdown: it never comes (see subWorkflows). */
const NEVER = new AbortController().signal;

/**
 * Executes `workflow.run` jobs: claims the run (running, with a lease), runs its plan from where an
 * earlier attempt left it, records steps as they finish and the terminal state at the end. A job
 * is only a pointer to a run; the run's state in the store decides what happens, so a duplicate or
 * late job is harmless. A run that reaches a Wait node is suspended as `waiting` with a delayed job.
 * A run over its workflow's concurrency limit is parked; each run of the workflow that leaves
 * `running` (it finished, waits or is handed back) hands its place to the oldest parked run.
 */
@Injectable()
export class RunWorker {
  /** Identifies this process in leases. */
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  /** A worker that stops renewing (it died) loses its runs this long after its last renewal (JOB_LEASE_MS). */
  private readonly leaseMs: number;
  private readonly renewEveryMs: number;
  private readonly logger: Logger;
  private readonly settings: WorkflowSettingsCache;
  private readonly errorWorkflows: ErrorWorkflowStarter;

  constructor(
    config: AppConfig,
    private readonly runs: RunStore,
    private readonly workflows: WorkflowStore,
    private readonly plans: RunPlans,
    private readonly executor: WorkflowExecutor,
    private readonly active: ActiveRuns,
    private readonly jobs: JobQueue,
    private readonly cipher: SecretCipher,
    private readonly access: AccessPolicy,
    private readonly actors: RunActors,
    readonly events: RunEvents,
    admission: RunAdmission,
    @Inject(ROOT_LOGGER) logger: Logger,
    private readonly metrics: Metrics,
  ) {
    this.leaseMs = config.JOB_LEASE_MS;
    this.renewEveryMs = Math.min(MAX_RENEW_INTERVAL_MS, Math.floor(this.leaseMs / 3));
    this.logger = logger.child({ component: 'runs' });
    this.settings = new WorkflowSettingsCache(workflows);
    this.errorWorkflows = {
      workflows,
      admission,
      logger: this.logger,
      errorWorkflowOf: async (workflowId) => (await this.settings.get(workflowId))?.errorWorkflowId,
    };
  }

  /**
   * The run's claim, made in its job's claim (JobClaiming: one commit for both, on SQLite) when it
   * needs no read first (its workflow's limit is known) and no handler here holds the run.
   */
  readonly claiming: JobClaiming<RunJobData, ClaimedRun> = {
    claim: ({ data }) => {
      const { runId, workflowId } = data ?? {};
      if (!this.runs.claimWithin || typeof runId !== 'string' || this.active.has(runId)) return undefined;
      const known = workflowId ? this.settings.fresh(workflowId) : { settings: undefined };
      if (!known) return undefined;
      const maxRunning = known.settings?.maxConcurrentRuns;
      const run = this.runs.claimWithin(runId, this.workerId, this.leaseUntil(), new Date(), maxRunning);
      return run && run !== AT_CONCURRENCY_LIMIT ? { run, maxRunning } : undefined;
    },
    release: async ({ run }) => void (await this.runs.release(run.id, this.workerId)),
  };

  // extraSlots: a slot more for each caller here waiting on a run's end (`?wait=`, chat, MCP), EmbeddedJobQueue's slots(),
  // beside worker processes too: a run claimed where its caller waits ends there, its end no notice relayed back.
  @OnJob(RUN_JOB, {
    concurrency: (config) => config.runConcurrency,
    claiming: (worker: RunWorker) => worker.claiming,
    extraSlots: (worker: RunWorker) => () => worker.events.callersWaiting,
  })
  async handle(job: JobContext<RunJobData>): Promise<void> {
    const runId = job.data?.runId;
    if (typeof runId !== 'string') throw new AppError(ErrorCode.VALIDATION_FAILED, `job ${job.id} names no run`);
    // Reserved before the claim: a second delivery of the run's job to this process must not claim
    // it again (a re-claim by the same owner succeeds, and would restart the run under our feet).
    // It waits for the handler here to be done instead of being dropped: it may be the job that
    // handler queued on its way out (a wait due at once, a woken run), which the run needs.
    const controller = new AbortController();
    // The run claimed with its job (claiming) is ours only if no handler here got to it first (then it is stale).
    let started = this.active.start(runId, controller);
    const early = started ? (job.claimed as ClaimedRun | undefined) : undefined;
    while (!started) {
      await this.active.settled(runId);
      // Stopping meanwhile: the job is handed back, for the next start.
      if (job.signal.aborted) throw job.signal.reason;
      started = this.active.start(runId, controller);
    }
    try {
      const maxRunning = early ? early.maxRunning : await this.settings.maxRunning(job.data.workflowId);
      let claimed = early ? early.run : await this.runs.claim(runId, this.workerId, this.leaseUntil(), new Date(), maxRunning);
      if (claimed === AT_CONCURRENCY_LIMIT) {
        await this.park(job.data);
        // A place freed between the refused claim and the park found no parked run to hand it to: look once more.
        claimed = await this.runs.claim(runId, this.workerId, this.leaseUntil(), new Date(), maxRunning);
        if (claimed === AT_CONCURRENCY_LIMIT) return;
      }
      // Finished, canceled, waiting for later, or running under a live lease elsewhere: nothing to do.
      if (!claimed) {
        if ((await this.runs.status(runId)) !== null) return;
        // Removed here while its job was queued (pruned, deleted with its workflow): the job ends as done, quietly.
        if (job.data.workflowId !== undefined && (await this.workflows.had(job.data.workflowId))) return;
        // A run this store has never had: the job is not dropped but failed as retryable, so it is
        // tried again (by a process that has the run, if one shares the queue) and kept among the
        // failed jobs after its last try.
        this.logger.warn({ runId, jobId: job.id }, 'a job names a run this store does not have; leaving it to be retried');
        throw new AppError(ErrorCode.UNAVAILABLE, `run ${runId} is not in this worker's store`, { retryable: true });
      }
      try {
        await this.execute(claimed, controller, job.signal, { finishing: job.finishing });
      } finally {
        if (maxRunning !== undefined) await this.wakeNext(claimed.workflowId);
      }
    } finally {
      this.active.finish(runId, controller);
    }
  }

  /**
   * Runs a claimed run to its end (or its next pause). A `child` (a sub-workflow run, executed in
   * line by its parent's node) holds its waits in this process, since its parent waits for it.
   */
  private async execute(run: Run, controller: AbortController, shutdown: AbortSignal, as: ExecuteAs = {}): Promise<RunOutcome | null> {
    const { child = false, finishing } = as;
    // The ids go in each line (a pino child per run cost more), in flat literals where a line is written for every run: pino walks
    // a line's fields with for-in, which took ~6 us on an object made by a spread and then extended (`{ ...ids, status }`).
    const ids = { runId: run.id, workflowId: run.workflowId };
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
      this.runs
        .renewLease(run.id, this.workerId, this.leaseUntil())
        .then(onLease, (error: Error) => this.logger.warn({ ...ids, err: error }, 'lease renewal failed'));
    }, this.renewEveryMs);
    heartbeat.unref();
    if (run.cancelRequested) onLease({ held: true, cancelRequested: true });
    const sealer = stateSealer(this.cipher, run.workflowId);
    // Whether any step of the run holds a sealed state, which its success drops: read back with the run, or sealed here.
    let statesSealed = run.steps.some((step) => step.state != null);
    const seal = (kept: KeptOutputs) => {
      const state = sealOutputs(sealer, kept);
      if (state !== null) statesSealed = true;
      return state;
    };
    const recorder = new StepRecorder(this.runs, run.id, this.workerId, onLease, seal);
    const started = Date.now();
    let redactor = Redactor.NONE;
    try {
      const prepared = await this.prepare(run, sealer).catch((error: unknown) => {
        throw new PreparationError(error);
      });
      redactor = prepared.redactor;
      const request: RunRequest = {
        runId: run.id,
        workflowId: run.workflowId,
        runType: run.runType,
        actingUserId: run.actingUserId,
        input: prepared.input,
        variables: prepared.variables,
        redactor,
        signal: controller.signal,
        abort: (reason) => controller.abort(reason),
        previous: run.steps,
        sealer,
        // The masks as they stand when the node starts the child: a credential used meanwhile has joined them.
        workflows: (nodeId) => this.subWorkflows(run, nodeId, request.redactor),
        holdWaits: child,
        progress: (event) => this.events.progress(run.id, event),
        ...(run.nodeTest ? { test: run.nodeTest } : {}),
      };
      const outcome = await this.executor.run(prepared.plan, request, {
        finished: (step, kept) => recorder.add(step, kept),
        started: (step) => recorder.write(step),
        starting: () => recorder.settle(),
      });
      // The run's masks grew with every credential a node injected.
      redactor = request.redactor;
      if (outcome.status === 'interrupted') {
        if (leaseLost) return null;
        if (child) {
          // Only the node that started it could go on with it, and that node was stopped: nothing
          // would ever continue it, so it ends here rather than wait in the queue.
          const error: RunError = {
            code: ErrorCode.INTERRUPTED,
            message: 'The node that started this sub-workflow run stopped before the run finished',
          };
          await this.complete(run, await recorder.drain(true), 'failed', error, undefined);
          this.logger.info({ runId: run.id, workflowId: run.workflowId, status: 'failed', code: error.code }, 'run finished');
          return { status: 'failed', error, steps: outcome.steps };
        }
        await this.runs.recordSteps(run.id, this.workerId, await recorder.drain(true));
        await this.runs.release(run.id, this.workerId);
        this.logger.info(ids, 'run handed back: the worker is stopping');
        throw shutdown.reason ?? new AppError(ErrorCode.UNAVAILABLE, 'The worker is stopping', { retryable: true });
      }
      if (outcome.status === 'waiting') {
        await this.pause(run, await recorder.drain(true), outcome.resumeAt!);
        this.logger.info({ runId: run.id, workflowId: run.workflowId, resumeAt: outcome.resumeAt!.toISOString() }, 'run waits');
        return outcome;
      }
      // What the run's record shows is also what a parent waiting for it gets: a sub-workflow's
      // secrets stay out of the parent's records, which its own viewers may not be meant to see.
      const output = redactor.value(outcome.output);
      const steps = await recorder.drain(outcome.status !== 'succeeded');
      await this.complete(run, steps, outcome.status, outcome.error, boundOutput(outcome, output), finishing, statesSealed);
      const finished = { runId: run.id, workflowId: run.workflowId, status: outcome.status, ms: Date.now() - started, attempt: run.claims };
      this.logger.info(finished, 'run finished');
      return Object.assign({}, outcome, { output });
    } catch (error) {
      if (!(error instanceof PreparationError)) throw error;
      // The run cannot start (a node type is gone, a secret does not decrypt): that is its outcome.
      const cause = error.cause;
      const runError: RunError = isAppError(cause)
        ? { code: cause.code, message: redactor.string(cause.message), ...(cause.details !== undefined ? { details: cause.details } : {}) }
        : { code: ErrorCode.INTERNAL, message: 'The run could not be prepared' };
      if (!isAppError(cause)) this.logger.error({ ...ids, err: cause }, 'run preparation failed');
      await this.complete(run, await recorder.drain(true), 'failed', runError, undefined, finishing);
      this.logger.info({ runId: run.id, workflowId: run.workflowId, status: 'failed', code: runError.code }, 'run finished');
      return { status: 'failed', error: runError, steps: [] };
    } finally {
      clearInterval(heartbeat);
      shutdown.removeEventListener('abort', onShutdown);
    }
  }

  /**
   * The run's plan, its input and what masks its records: the secrets of its workflow, and for a
   * sub-workflow run whose input held its parent's secrets, those too (sealed with the input).
   */
  private async prepare(run: Run, sealer: StateSealer): Promise<RunPlan & { input: unknown }> {
    await this.actors.assertRunMayAct(run);
    const prepared = await this.plans.forRun(run);
    if (!run.sealedInput) return Object.assign({}, prepared, { input: run.input });
    const inherited = sealer.open(run.sealedInput) as { input: unknown; secrets: string[] };
    return { ...prepared, input: inherited.input, redactor: prepared.redactor.with(inherited.secrets) };
  }

  /**
   * `ctx.workflows` of a node: the child run is created linked to this run and node, claimed by
   * this worker and executed here, in line, since the parent waits for it (a queue slot of its own
   * could deadlock parents waiting on children). For the same reason the child ignores its
   * workflow's concurrency limit and takes none of its places: it runs in its parent's.
   *
   * The child follows the node's signal (a cancel of the parent, the node's or the run's time
   * limit) and never the process's shutdown: the node that started it must not run twice, so it
   * finishes what it started when the process stops (within the queue's shutdown grace), and the
   * parent goes on after it at the next start.
   *
   * The child's viewers may not see the parent: an input that holds the parent's secrets is stored
   * masked, and sealed as given with those secrets, which the child then masks in its records too.
   */
  private subWorkflows(parent: Run, nodeId: string, redactor: Redactor): WorkflowsFacade {
    return {
      execute: async (workflowId, input, { runType = 'production', signal }): Promise<WorkflowRunResult> => {
        if (parent.depth + 1 > MAX_SUB_WORKFLOW_DEPTH) {
          throw new NodeConfigurationError(`Sub-workflows nest ${MAX_SUB_WORKFLOW_DEPTH} deep at the most: does a workflow run itself?`, {
            details: { workflowId },
          });
        }
        const { workflow, actingUserId } = await this.childWorkflow(parent, workflowId, runType);
        const masked = redactor.value(input);
        const holdsSecrets = redactor.active && JSON.stringify(masked) !== JSON.stringify(input);
        const child = newQueuedRun({
          ...runOf(workflow, runType),
          input: masked,
          sealedInput: holdsSecrets ? stateSealer(this.cipher, workflow.id).seal({ input, secrets: redactor.secrets }) : null,
          trigger: 'sub-workflow',
          startedBy: parent.startedBy,
          actingUserId,
          idempotencyKey: null,
          parentRunId: parent.id,
          parentNodeId: nodeId,
          depth: parent.depth + 1,
        });
        await this.runs.create(child, new Date());
        const claimed = await this.runs.claim(child.id, this.workerId, this.leaseUntil(), new Date());
        if (!claimed || claimed === AT_CONCURRENCY_LIMIT)
          throw new AppError(ErrorCode.INTERNAL, `Sub-workflow run ${child.id} could not be started`);
        const controller = new AbortController();
        const follow = () => controller.abort(signal.reason);
        if (signal.aborted) follow();
        else signal.addEventListener('abort', follow, { once: true });
        try {
          const outcome = await this.execute(claimed, controller, NEVER, { child: true });
          if (!outcome || outcome.status === 'interrupted' || outcome.status === 'waiting') {
            throw new AppError(ErrorCode.UNAVAILABLE, `Sub-workflow run ${child.id} was interrupted`, { retryable: false });
          }
          return {
            runId: child.id,
            status: outcome.status,
            output: outcome.output,
            ...(outcome.error ? { error: { code: outcome.error.code, message: outcome.error.message } } : {}),
          };
        } finally {
          signal.removeEventListener('abort', follow);
        }
      },
      describeTool: async (workflowId): Promise<WorkflowToolInfo> => {
        const { workflow } = await this.childWorkflow(parent, workflowId, 'production');
        if (!workflow.tool) {
          throw new NodeConfigurationError(
            `Workflow ${workflowId} offers no tool: its published version needs an mcp-trigger (whose input schema is the tool's)`,
            {
              details: { workflowId },
            },
          );
        }
        return {
          workflowId,
          name: workflow.tool.name ?? workflow.name,
          description: workflow.tool.description ?? `Runs the workflow "${workflow.name}" and answers with its output.`,
          inputSchema: workflow.tool.inputSchema,
        };
      },
    };
  }

  /**
   * The child's workflow, if the parent's acting user may run it (editor, as for the webhook), and
   * the user the child acts as: whoever vouched for what it executes (see userInForce), who must
   * still be able to act on it. A child never borrows its parent's rights: an editor of the child
   * alone decides what it does, so it acts with that editor's rights, never the caller's.
   */
  private async childWorkflow(parent: Run, workflowId: string, runType: 'production' | 'test') {
    let workflow;
    try {
      await this.access.require({ userId: parent.actingUserId }, 'workflow', workflowId, 'editor');
      workflow = await this.workflows.get(workflowId);
      if (!workflow) throw AppError.notFound('workflow', workflowId);
      runOf(workflow, runType);
    } catch (error) {
      if (!isAppError(error)) throw error;
      throw new NodeConfigurationError(
        `${error.message} (the run acts as user ${parent.actingUserId}, who needs the editor role on the workflow)`,
        {
          details: { workflowId, code: error.code },
        },
      );
    }
    const actingUserId = await userInForce(this.workflows, workflow, runType);
    if (actingUserId === null) {
      throw new NodeConfigurationError(
        `Workflow ${workflowId}'s draft was saved before its author was kept, so nobody vouches for it: an editor must save it again`,
        { details: { workflowId } },
      );
    }
    const what = runType === 'test' ? 'saved its draft' : 'put its version in force';
    try {
      await this.actors.assertMayAct(actingUserId, workflowId, 'editor', `A sub-workflow run of workflow ${workflowId}`, ` (who ${what})`);
    } catch (error) {
      if (!isAppError(error)) throw error;
      throw new NodeConfigurationError(error.message, { details: { workflowId, code: error.code } });
    }
    return { workflow, actingUserId };
  }

  /** Parked until `resumeAt` under a delayed job: no worker is held while the run waits. */
  private async pause(run: Run, steps: Parameters<RunStore['suspend']>[2], resumeAt: Date): Promise<void> {
    const jobId = `${run.id}.w${run.claims}`;
    if (!(await this.runs.suspend(run.id, this.workerId, steps, resumeAt, jobId))) {
      // Still ours, so refused because a cancel came while the run was on its way to the wait: it ends here.
      if ((await this.runs.renewLease(run.id, this.workerId, this.leaseUntil())).cancelRequested) await this.cancelAtWait(run, steps);
      return;
    }
    try {
      await this.jobs.enqueue<RunJobData>(RUN_JOB, runJob(run), runJobOptions(run, jobId, Math.max(0, resumeAt.getTime() - Date.now())));
    } catch (error) {
      this.logger.warn({ runId: run.id, err: error }, 'waiting run has no job yet; the reconciler will enqueue it');
    }
  }

  /** A run canceled as it reached a wait: the step that would have waited ends canceled, and so does the run. */
  private async cancelAtWait(run: Run, steps: Parameters<RunStore['suspend']>[2]): Promise<void> {
    const now = new Date();
    const waiting = steps.find((step) => step.status === 'waiting');
    const ended = steps.map((step) => (step.status === 'waiting' ? { ...step, status: 'canceled' as const, finishedAt: now } : step));
    await this.complete(run, ended, 'canceled', canceledWhileWaiting(waiting?.nodeId ?? '?'), undefined);
    this.logger.info({ runId: run.id }, 'run canceled as it reached a wait');
  }

  /** The workflow is at its concurrency limit: the run waits, parked, for a place (see wakeNext), under a late safety-net job. */
  private async park(data: RunJobData): Promise<void> {
    const jobId = `${data.runId}.p${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
    if (!(await this.runs.park(data.runId, jobId))) return;
    await this.jobs.enqueue<RunJobData>(
      RUN_JOB,
      { runId: data.runId, workflowId: data.workflowId },
      { jobId, delayMs: PARKED_RECHECK_MS, ...RUN_JOB_OPTIONS },
    );
  }

  /** A run of a limited workflow left `running`: its place goes to the oldest parked run, at once. */
  private async wakeNext(workflowId: string): Promise<void> {
    try {
      const next = await this.runs.unparkOldest(workflowId, `.u${Date.now().toString(36)}${randomBytes(2).toString('hex')}`);
      if (next) await this.jobs.enqueue<RunJobData>(RUN_JOB, runJob(next), runJobOptions(next, next.jobId));
    } catch (error) {
      this.logger.warn({ workflowId, err: error }, 'the next run waiting for a place could not be woken; it looks again later');
    }
  }

  private async complete(
    run: Run,
    steps: Parameters<RunStore['complete']>[2],
    status: 'succeeded' | 'failed' | 'canceled',
    error: RunError | null,
    output: unknown,
    finishing?: () => void,
    statesSealed = true,
  ): Promise<void> {
    const finishedAt = new Date();
    const stepData = (await this.settings.get(run.workflowId))?.stepData;
    const keepStepData = (status === 'succeeded' ? stepData?.succeeded : stepData?.failed) !== 'none';
    // A caller here waiting for the run (`?wait=`, chat) is handed the finished run the store read in its write.
    const read = this.events.awaited(run.id);
    const completion = {
      status,
      error,
      finishedAt,
      output, // as the record keeps it (boundOutput)
      keepStepData,
      statesSealed,
      read,
    };
    finishing?.(); // the run's job completes in the run's transaction (JobContext.finishing): one commit, not two
    const completed = await this.runs.complete(run.id, this.workerId, steps, completion);
    // Not recorded when the lease was lost meanwhile: the worker that took the run over records it.
    if (completed) this.metrics.runFinished(status, (finishedAt.getTime() - (run.startedAt ?? run.createdAt).getTime()) / 1000);
    this.events.finished(run.id, typeof completed === 'object' ? completed : undefined);
    if (completed && status === 'failed') await startErrorWorkflow(this.errorWorkflows, run, error, finishedAt);
  }

  private leaseUntil(): Date {
    return new Date(Date.now() + this.leaseMs);
  }
}

/** A run claimed in its job's claim, and the limit of its workflow it was claimed under. */
type ClaimedRun = { run: Run; maxRunning: number | undefined };

/** A sub-workflow run (`child`), or a job's run and how its job completes beside it (`finishing`). */
type ExecuteAs = { child?: boolean; finishing?: () => void };

class PreparationError extends Error {
  constructor(override readonly cause: unknown) {
    super('run preparation failed');
  }
}
