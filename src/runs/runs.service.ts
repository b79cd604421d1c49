import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { Page, PageRequest } from '../common/page';
import { Metrics } from '../metrics/metrics.service';
import { ShutdownSignal } from '../common/shutdown-signal';
import { newQueuedRun, Run, runOf, RunStatus, RunTrigger, RunType, TERMINAL_RUN_STATUSES } from '../domain/run.model';
import { RunAdmission } from './run-admission.service';
import { NodeRegistry } from '../engine/node-registry';
import { compileWorkflow } from '../engine/workflow-compiler';
import { RunFilter, RunStore } from '../domain/run-store.port';
import { StartableWorkflow, Workflow } from '../domain/workflow.model';
import { WorkflowStore } from '../domain/workflow-store.port';
import { ActiveRuns } from './active-runs';
import { RateLimiter } from '../domain/rate-limiter.port';
import { RunEvents } from './run-events';
import { acceptedView, runSummaryView, runView } from './run-views';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/**
 * A caller waiting for a run to leave a status other than by ending (`waitFor`'s `from`: a tool
 * run that stops at an approval, or goes on after one) looks at the store this often: in this
 * process nothing tells of it. A caller waiting for the end reads on RunEvents' schedule.
 */
const WAIT_POLL_MS = 250;

export interface AcceptedRun {
  /** False when an Idempotency-Key matched an earlier run, which is returned instead. */
  created: boolean;
  workflowName?: string;
  body: ReturnType<typeof acceptedView>;
  /** With `?wait=`: the run record, once it finished in time. */
  finished?: ReturnType<typeof runView>;
}

/** Starting, reading, retrying and canceling runs; every method checks the caller's role on the workflow. */
@Injectable()
export class RunsService {
  private readonly logger: Logger;

  constructor(
    private readonly runs: RunStore,
    private readonly workflows: WorkflowStore,
    private readonly access: AccessPolicy,
    private readonly admission: RunAdmission,
    private readonly active: ActiveRuns,
    private readonly limiter: RateLimiter,
    private readonly events: RunEvents,
    @Inject(ROOT_LOGGER) logger: Logger,
    private readonly metrics: Metrics,
    private readonly shutdown: ShutdownSignal,
    private readonly registry: NodeRegistry,
  ) {
    this.logger = logger.child({ component: 'runs' });
  }

  /**
   * The webhook. Admission control first (429 beyond the workflow's queued-run limit, 503 beyond
   * the service's), then writes the run as queued with its job (RunAdmission.accept), so no job ever
   * names a run the store lacks; answers without waiting for the run unless `waitSeconds` asks to. If
   * the queue does not take the job in time, no run is kept and the caller is answered 503: no run
   * exists that the caller was told was refused, and a retry with the same Idempotency-Key starts it once.
   */
  async start(
    principal: Principal,
    workflowId: string,
    { runType, input }: { runType: RunType; input: unknown },
    options: { idempotencyKey?: string; waitSeconds?: number; trigger?: 'webhook' | 'console' } = {},
  ): Promise<AcceptedRun> {
    const { idempotencyKey, waitSeconds, trigger = 'webhook' } = options;
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw AppError.validation([{ field: 'Idempotency-Key', reason: 'must be 1 to 255 visible ASCII characters' }]);
    }
    if (!waitSeconds) return this.startAs(principal, 'editor', trigger, workflowId, runType, input, idempotencyKey ?? null);
    // The caller is counted before its run is stored, so the claim its job's enqueue wakes has a slot
    // for it (RunEvents.callersWaiting); waitFor counts it from its first line on.
    const waits = this.events.callerWaits();
    try {
      const accepted = await this.startAs(principal, 'editor', trigger, workflowId, runType, input, idempotencyKey ?? null);
      const waiting = this.waited(accepted, waitSeconds * 1000);
      waits();
      return await waiting;
    } finally {
      waits();
    }
  }

  /**
   * A run of the published version started through the workflow's MCP tool, which users with the
   * viewer role may call: the run acts as the caller. `versionId` is the version the tool was read
   * from: if another version is active now (published through another process since), the call is
   * refused rather than run a version that may be no tool at all, with arguments checked against
   * another schema.
   * @throws AppError CONFLICT when the active version is no longer `versionId`
   */
  async startAsViewer(principal: Principal, workflowId: string, versionId: string, input: unknown): Promise<AcceptedRun['body']> {
    return (await this.startAs(principal, 'viewer', 'mcp', workflowId, 'production', input, null, versionId)).body;
  }

  /**
   * A chat message: a run of the published version of `workflow`, which the caller read with their
   * role (WorkflowStore.startable) and found to hold the editor role on, as for the webhook, and
   * whose version's chat-trigger the message was checked against: what they read is what runs, so
   * nothing is read again. The same Idempotency-Key within 24 hours returns the first run.
   */
  async startChat(
    principal: Principal,
    workflow: StartableWorkflow,
    input: { sessionId: string; message: string },
    idempotencyKey?: string,
  ): Promise<AcceptedRun> {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw AppError.validation([{ field: 'Idempotency-Key', reason: 'must be 1 to 255 visible ASCII characters' }]);
    }
    return this.startRead(principal, 'chat', workflow, 'production', input, idempotencyKey ?? null);
  }

  /** A caller's run: it acts as the caller, who needs `role` on the workflow. */
  private async startAs(
    principal: Principal,
    role: 'viewer' | 'editor',
    trigger: RunTrigger,
    workflowId: string,
    runType: RunType,
    input: unknown,
    idempotencyKey: string | null,
    versionId?: string,
  ): Promise<AcceptedRun> {
    const workflow = await this.startable(principal, workflowId, role, runType);
    if (versionId !== undefined && workflow.activeVersionId !== versionId) {
      throw AppError.conflict(`Workflow ${workflowId} has another active version since its tool was listed: list the tools again`);
    }
    return this.startRead(principal, trigger, workflow, runType, input, idempotencyKey);
  }

  /** A caller's run of `workflow`, read with the caller's role, which was found to suffice. */
  private async startRead(
    principal: Principal,
    trigger: RunTrigger,
    workflow: StartableWorkflow & Partial<Pick<Workflow, 'draft'>>,
    runType: RunType,
    input: unknown,
    idempotencyKey: string | null,
  ): Promise<AcceptedRun> {
    await this.admit(workflow);
    // Assigned, not spread into literals that go on after the spread: see contextFor (engine/executor/node-context.ts).
    const run = newQueuedRun(
      Object.assign(runOf(workflow, runType), {
        input,
        trigger,
        startedBy: principal.userId,
        actingUserId: principal.userId,
        idempotencyKey,
      }),
    );
    return Object.assign(await this.accept(run, workflow), { workflowName: workflow.name });
  }

  /**
   * The workflow of a caller's run, once the caller is found to hold `role` on it: a run of the
   * published version reads the workflow without its draft, which it never reads, with the role;
   * a test run reads the draft it runs.
   */
  private async startable(
    principal: Principal,
    workflowId: string,
    role: 'viewer' | 'editor',
    runType: RunType,
  ): Promise<StartableWorkflow & Partial<Pick<Workflow, 'draft'>>> {
    if (runType !== 'production') {
      await this.access.require(principal, 'workflow', workflowId, role);
      const workflow = await this.workflows.get(workflowId);
      if (!workflow) throw AppError.notFound('workflow', workflowId);
      return workflow;
    }
    const read = await this.workflows.startable(workflowId, principal.userId);
    if (!read) throw AppError.notFound('workflow', workflowId);
    this.access.check(read.role, 'workflow', workflowId, role);
    return read.workflow;
  }

  /**
   * A test of one node of the draft (n8n's partial execution): it runs on `input` when given, else
   * on the data pinned on it in the draft, else on what it received in run `fromRunId`; with
   * `andAfter`, what follows it runs too, and nothing else does. A test run of the draft, as the
   * caller, who needs the editor role.
   */
  async testNode(
    principal: Principal,
    workflowId: string,
    test: { nodeId: string; input?: unknown; hasInput: boolean; fromRunId?: string; andAfter: boolean },
    waitSeconds?: number,
  ): Promise<AcceptedRun> {
    await this.access.require(principal, 'workflow', workflowId, 'editor');
    const workflow = await this.workflows.get(workflowId);
    if (!workflow) throw AppError.notFound('workflow', workflowId);
    const node = workflow.draft.nodes.find((n) => n.id === test.nodeId);
    if (!node)
      throw AppError.validation([
        { field: 'nodeId', reason: `names no node of the draft (nodes: ${workflow.draft.nodes.map((n) => n.id).join(', ')})` },
      ]);
    if (this.insideLoop(workflow.draft, test.nodeId)) {
      throw AppError.validation([{ field: 'nodeId', reason: 'is inside a loop body: test the loop node, whose body runs with it' }]);
    }
    const input = await this.testInput(principal, workflow, test);
    await this.admit(workflow);
    const run = newQueuedRun({
      ...runOf(workflow, 'test'),
      input,
      trigger: 'node-test',
      startedBy: principal.userId,
      actingUserId: principal.userId,
      idempotencyKey: null,
      nodeTest: { nodeId: test.nodeId, andAfter: test.andAfter },
    });
    const accepted = { ...(await this.accept(run, workflow)), workflowName: workflow.name };
    return waitSeconds ? this.waited(accepted, waitSeconds * 1000) : accepted;
  }

  /**
   * A `?wait=` answer: the run record once it finished within `ms`, else the accepted answer with
   * the status the run has now (still queued, running, or waiting at an approval), not the one it
   * was accepted with: one more read of its status, made only when time ran out. A run that ended
   * in between is answered with its record after all. Calls waitFor before its first await, so
   * the caller is counted at once (see start).
   */
  private async waited(accepted: AcceptedRun, ms: number): Promise<AcceptedRun> {
    const runId = accepted.body.runId;
    let finished = await this.waitFor(runId, ms);
    if (!finished) {
      const status = await this.runs.status(runId);
      if (!status) return accepted;
      if (!TERMINAL_RUN_STATUSES.includes(status))
        return Object.assign({}, accepted, { body: Object.assign({}, accepted.body, { status }) });
      finished = await this.runs.get(runId);
      if (!finished) return accepted;
    }
    return Object.assign({}, accepted, { finished: runView(finished, accepted.workflowName) });
  }

  private async testInput(
    principal: Principal,
    workflow: Workflow,
    test: { nodeId: string; input?: unknown; hasInput: boolean; fromRunId?: string },
  ): Promise<unknown> {
    if (test.hasInput) return test.input;
    const pinned = workflow.draft.pinnedData;
    if (pinned && Object.prototype.hasOwnProperty.call(pinned, test.nodeId)) return pinned[test.nodeId];
    if (!test.fromRunId) {
      throw AppError.validation([
        {
          field: 'input',
          reason: `is required: give the node's input, pin data on node "${test.nodeId}", or name a run (fromRunId) whose record holds its input`,
        },
      ]);
    }
    const earlier = await this.readable(principal, test.fromRunId, 'viewer');
    if (earlier.workflowId !== workflow.id)
      throw AppError.validation([{ field: 'fromRunId', reason: `is a run of another workflow (${earlier.workflowId})` }]);
    const step = earlier.steps.find((s) => s.nodeId === test.nodeId);
    if (!step || step.input === undefined) {
      throw AppError.validation([
        {
          field: 'fromRunId',
          reason: `run ${earlier.id} holds no input of node "${test.nodeId}" (it did not run there, or its workflow keeps no step data)`,
        },
      ]);
    }
    // What the record shows: masked where it held a secret, as the caller sees it.
    return step.input;
  }

  /** Where the compiler puts the node: inside a loop's body or not (a draft that does not compile has no body to be in). */
  private insideLoop(definition: Workflow['draft'], nodeId: string): boolean {
    try {
      return compileWorkflow(definition, this.registry, { aiDecide: true }).byId.get(nodeId)?.loop != null;
    } catch {
      return false;
    }
  }

  /**
   * A new run of the same workflow version and input. `from: 'failed'` starts where the run
   * failed: the nodes that had finished are not run again, their kept outputs are reused.
   */
  async retry(principal: Principal, runId: string, from: 'start' | 'failed'): Promise<AcceptedRun> {
    const original = await this.readable(principal, runId, 'editor');
    if (!TERMINAL_RUN_STATUSES.includes(original.status)) {
      throw AppError.conflict(`Run ${runId} is ${original.status}: only a finished run can be retried`);
    }
    if (from === 'failed' && original.status === 'succeeded') {
      throw AppError.conflict(`Run ${runId} succeeded: there is no failed node to retry from; retry from "start"`);
    }
    const workflow = await this.workflows.get(original.workflowId);
    if (!workflow) throw AppError.notFound('workflow', original.workflowId);
    const reused =
      from === 'failed'
        ? original.steps.filter((step) => step.status === 'succeeded' && step.state).map((step) => ({ ...step, reused: true }))
        : [];
    if (
      from === 'failed' &&
      reused.length === 0 &&
      original.steps.some((step) => step.status === 'succeeded') &&
      workflow.settings.stepData?.failed === 'none'
    ) {
      // Nothing a node produced was kept: "from the failed node" would quietly run everything again.
      throw AppError.conflict(
        `Run ${runId} kept no step data (settings.stepData.failed is "none"): nothing can be reused; retry from "start"`,
      );
    }
    await this.admit(workflow);
    return this.accept(
      newQueuedRun({
        workflowId: original.workflowId,
        runType: original.runType,
        versionId: original.versionId,
        version: original.version,
        definition: original.definition,
        input: original.input,
        sealedInput: original.sealedInput,
        trigger: 'retry',
        startedBy: principal.userId,
        actingUserId: principal.userId,
        idempotencyKey: null,
        retryOf: original.id,
        steps: reused,
      }),
      workflow,
    );
  }

  async get(principal: Principal, runId: string) {
    const run = await this.readable(principal, runId, 'viewer');
    const children = await this.runs.list({ parentRunId: run.id }, { offset: 0, limit: 100 });
    const names = await this.workflows.names([run.workflowId, ...children.items.map((child) => child.workflowId)]);
    return {
      ...runView(run, names.get(run.workflowId) ?? null),
      children: children.items.map((child) => runSummaryView(child, names.get(child.workflowId) ?? null)),
    };
  }

  async list(
    principal: Principal,
    filter: Omit<RunFilter, 'visibleTo'>,
    page: PageRequest,
  ): Promise<Page<ReturnType<typeof runSummaryView>>> {
    // One workflow: the role check has settled visibility. All of them: the store keeps the user's own.
    if (filter.workflowId) await this.access.require(principal, 'workflow', filter.workflowId, 'viewer');
    const result = await this.runs.list({ ...filter, visibleTo: filter.workflowId ? undefined : principal.userId }, page);
    const names = await this.workflows.names(result.items.map((run) => run.workflowId));
    return { items: result.items.map((run) => runSummaryView(run, names.get(run.workflowId) ?? null)), total: result.total };
  }

  /**
   * A queued or waiting run is canceled at once; a running one stops at its next step (at once
   * when this process runs it). Canceling a canceled run is a no-op; a finished one cannot be canceled.
   */
  async cancel(principal: Principal, runId: string) {
    return this.cancelRun(await this.readable(principal, runId, 'editor'));
  }

  /**
   * A run the caller started through a workflow's MCP tool (an MCP task): the caller may cancel it
   * with the viewer role the call needed. Anyone else's run, or one started another way, is "not found".
   */
  async cancelOwnToolRun(principal: Principal, runId: string) {
    return this.cancelRun(await this.ownToolRun(principal, runId));
  }

  /**
   * A run the caller started through a workflow's MCP tool, with its steps: what an MCP task or a
   * client following the call reads. Anyone else's run, or one started another way, is "not found".
   */
  async ownToolRun(principal: Principal, runId: string): Promise<Run> {
    const run = await this.readable(principal, runId, 'viewer');
    if (run.trigger !== 'mcp' || run.startedBy !== principal.userId) throw AppError.notFound('run', runId);
    return run;
  }

  private async cancelRun(run: Run) {
    const runId = run.id;
    if (run.status === 'succeeded' || run.status === 'failed') {
      throw AppError.conflict(`Run ${runId} already ${run.status}`);
    }
    const updated = await this.runs.requestCancel(runId, new Date());
    if (!updated) throw AppError.notFound('run', runId);
    // A running run is counted by its worker when it stops; a queued or waiting one ends here, and
    // its waiters hear of it now, not at their next look at the store.
    if (run.status !== 'canceled' && run.status !== 'running' && updated.status === 'canceled') {
      this.metrics.runFinished('canceled');
      this.events.finished(runId);
    }
    this.active.cancel(runId);
    return runView(updated, (await this.workflows.names([updated.workflowId])).get(updated.workflowId) ?? null);
  }

  /**
   * The run once it reached a terminal state, or null when `ms` passed first or the process
   * began to stop. Callers bound `ms` (the webhook's `?wait=` at MAX_WAIT_SECONDS seconds, MCP tool calls at
   * MCP_TOOL_TIMEOUT_MS). Looks at the status alone until it is terminal, then reads the run once;
   * woken by the run's end (told in this process or by a linked one), it reads the run at once, or
   * answers with the finished run it was handed (its worker is in this process).
   * With `from` it also ends once the status is no longer `from` (a tool call followed while it
   * runs stops at `waiting`, at an approval; one followed while it waits stops when it goes on).
   */
  async waitFor(runId: string, ms: number, from?: RunStatus): Promise<Run | null> {
    const deadline = Date.now() + ms;
    // Counted synchronously, before the first await (start() hands its count over here).
    const waits = this.events.callerWaits();
    const unwatch = this.events.watch(runId);
    const over = (status: RunStatus | null) =>
      status === null || (from !== undefined && status !== from) || TERMINAL_RUN_STATUSES.includes(status);
    try {
      // Told that the run ended, the waiter reads the run at once: its status first would be a second read of a run that ended.
      // Told with the finished run (it ended in this process), it answers with that run: no read at all.
      let ended: Run | boolean = false;
      for (;;) {
        if (ended) {
          const run = ended === true ? await this.runs.get(runId) : ended;
          if (over(run?.status ?? null)) return run;
        } else if (over(await this.runs.status(runId))) return this.runs.get(runId);
        const left = deadline - Date.now();
        if (left <= 0 || this.shutdown.stopping) return null;
        ended = await this.events.nextFinish(
          runId,
          Math.min(left, from === undefined ? this.events.fallbackMs : WAIT_POLL_MS),
          this.shutdown.signal,
        );
      }
    } finally {
      unwatch();
      waits();
    }
  }

  /** The workflow's webhook rate limit, when it has one. */
  private async admit(workflow: Pick<Workflow, 'id' | 'settings'>): Promise<void> {
    const limit = workflow.settings.rateLimit;
    if (!limit) return;
    // The limit is part of the key: a changed limit counts afresh instead of inheriting the window
    // (up to a day long) of the old one.
    const decision = await this.limiter.take(
      `webhook:${workflow.id}:${limit.requests}/${limit.perSeconds}`,
      limit.requests,
      limit.perSeconds * 1000,
    );
    if (!decision.allowed) {
      const retryAfterSeconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new AppError(
        ErrorCode.RATE_LIMITED,
        `Workflow ${workflow.id} accepts ${limit.requests} run(s) per ${limit.perSeconds} s: try again in ${retryAfterSeconds} s`,
        {
          details: { retryAfterSeconds, limit },
          retryable: true,
        },
      );
    }
  }

  /** Admission control (queued-run limits, a queue that answers) decides; a refusal throws 429 or 503. */
  private async accept(run: Run, workflow: Pick<Workflow, 'settings'>): Promise<AcceptedRun> {
    const stored = await this.admission.accept(run, 'caller', workflow.settings);
    return { created: stored.created, body: acceptedView(stored.run) };
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
