import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AccessPolicy, roleAtLeast } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode, FieldError } from '../common/app-error';
import { ApprovalLinks } from './approval-links';
import { ROOT_LOGGER } from '../common/logger';
import { SecretCipher } from '../common/secret-cipher';
import { openKept, sealOutputs } from '../engine/executor/step-records';
import type { StepRecord } from '../domain/step.model';
import { JobQueue } from '../domain/job-queue.port';
import { RUN_JOB, runJob, RunJobData, runJobOptions } from './run.job';
import type { Run } from '../domain/run.model';
import { stateSealer } from './state-sealer';
import { MembershipStore } from '../domain/membership-store.port';
import { RunStore } from '../domain/run-store.port';
import { UserStore } from '../domain/user-store.port';
import { WorkflowStore } from '../domain/workflow-store.port';
import { SchemaProblem, schemaProblems } from '../sdk';

/** The node type whose waits people decide. */
export const APPROVAL_TYPE = 'approval';
export const DECISIONS = ['approved', 'rejected'] as const;
export type Decision = (typeof DECISIONS)[number];
/** The inbox lists at most this many approvals, oldest first. */
const MAX_INBOX = 200;

/** Who decided: a user of the service, or whoever held the link. */
export type DecidedBy = { type: 'user'; userId: string; name: string | null; email: string | null } | { type: 'link' };

/** A pending approval as the inbox and the approval page show it (masked like the run's records). */
export interface PendingApproval {
  runId: string;
  workflowId: string;
  workflowName: string | null;
  nodeId: string;
  summary: string;
  /** The JSON Schema of the fields the approver fills in; null when none. */
  fields: Record<string, unknown> | null;
  createdAt: string | null;
  expiresAt: string;
  /** The signed one-time link: only editors (the inbox) and the link's holder see it. */
  approvalUrl: string;
}

export interface DecisionRequest {
  decision: Decision;
  fields?: Record<string, unknown>;
  comment?: string;
}

/**
 * The approval a run waits at, as one user sees it: what it asks, and whether that user may decide
 * it (the editor role on the workflow, as for the inbox); only then does it carry the signed link.
 */
export interface WaitingApproval {
  nodeId: string;
  summary: string;
  fields: Record<string, unknown> | null;
  expiresAt: string;
  mayDecide: boolean;
  approvalUrl?: string;
}

export interface DecisionView {
  runId: string;
  nodeId: string;
  decision: Decision;
  decidedBy: DecidedBy;
  decidedAt: string;
  fields: Record<string, unknown> | null;
  comment: string | null;
}

/** What an approval step records while it waits (see plugins/approval). */
interface PendingRecord {
  status: 'pending';
  summary?: unknown;
  fields?: unknown;
  expiresAt?: unknown;
}

/**
 * People's decisions on approval nodes, through three doors: the inbox and REST (users with the
 * editor role on the workflow) and the signed one-time link (whoever holds it). A decision
 * replaces the outputs the step keeps for its run (sealed, as the worker seals them) with the
 * decision's, on the output the decision names, makes the run due at once and enqueues it: the
 * run goes on from there on any worker, like a Wait node whose time came. The store's
 * compare-and-set on the step's sealed state lets exactly one decision through.
 */
@Injectable()
export class ApprovalsService {
  private readonly logger: Logger;

  constructor(
    private readonly runs: RunStore,
    private readonly workflows: WorkflowStore,
    private readonly memberships: MembershipStore,
    private readonly users: UserStore,
    private readonly access: AccessPolicy,
    private readonly links: ApprovalLinks,
    private readonly cipher: SecretCipher,
    private readonly jobs: JobQueue,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'approvals' });
  }

  /** The approvals waiting for a decision that the caller may take (editor role on the workflow), oldest first. */
  async inbox(principal: Principal): Promise<PendingApproval[]> {
    const waiting = await this.runs.listWaitingSteps({ type: APPROVAL_TYPE, visibleTo: principal.userId }, MAX_INBOX);
    const workflowIds = [...new Set(waiting.map((w) => w.run.workflowId))];
    const [roles, names] = await Promise.all([
      this.memberships.listForUser('workflow', principal.userId),
      this.workflows.names(workflowIds),
    ]);
    const now = Date.now();
    return waiting
      .filter(
        ({ run, step }) =>
          roleAtLeast(roles.get(run.workflowId) ?? null, 'editor') && isPending(step) && (run.resumeAt?.getTime() ?? 0) > now,
      )
      .map(({ run, step }) => pendingView(run, step, names.get(run.workflowId) ?? null, this.links));
  }

  /**
   * The approval `run` (read with its steps) waits at now, as `principal` sees it; null when it
   * waits at none (or its time is up).
   */
  async waitingFor(principal: Principal, run: Run, now = Date.now()): Promise<WaitingApproval | null> {
    if (run.status !== 'waiting' || (run.resumeAt?.getTime() ?? 0) <= now) return null;
    const step = run.steps.find((s) => s.type === APPROVAL_TYPE && s.status === 'waiting' && isPending(s));
    if (!step) return null;
    const role = await this.memberships.getRole('workflow', run.workflowId, principal.userId);
    const view = pendingView(run, step, null, this.links);
    const mayDecide = roleAtLeast(role, 'editor');
    return {
      nodeId: view.nodeId,
      summary: view.summary,
      fields: view.fields,
      expiresAt: view.expiresAt,
      mayDecide,
      ...(mayDecide ? { approvalUrl: view.approvalUrl } : {}),
    };
  }

  /** A decision through REST or the inbox: the editor role on the workflow (a viewer gets 403). */
  async decideAsUser(principal: Principal, runId: string, nodeId: string, request: DecisionRequest): Promise<DecisionView> {
    const run = await this.runs.get(runId);
    if (!run) throw AppError.notFound('run', runId);
    try {
      await this.access.require(principal, 'workflow', run.workflowId, 'editor');
    } catch (error) {
      if (error instanceof AppError && error.code === ErrorCode.NOT_FOUND) throw AppError.notFound('run', runId);
      throw error;
    }
    const user = await this.users.getUser(principal.userId);
    return this.decide(run, nodeId, request, {
      type: 'user',
      userId: principal.userId,
      name: user?.name ?? null,
      email: user?.email ?? null,
    });
  }

  /** What the link's page shows; refuses a link that was used (409), expired (410) or never made here (404). */
  async pendingByLink(token: string): Promise<PendingApproval> {
    const { run, step } = await this.openLink(token);
    return pendingView(run, step, (await this.workflows.names([run.workflowId])).get(run.workflowId) ?? null, this.links);
  }

  async decideByLink(token: string, request: DecisionRequest): Promise<DecisionView> {
    const { run } = await this.openLink(token);
    return this.decide(run, this.links.read(token).nodeId, request, { type: 'link' });
  }

  /** The schema of a link's fields, to read a submitted form by: null when it asks for none. */
  private async openLink(token: string): Promise<{ run: Run; step: StepRecord }> {
    const claim = this.links.read(token);
    const run = await this.runs.get(claim.runId);
    // Deleted with its workflow, or pruned: the link leads nowhere any more.
    if (!run) throw new AppError(ErrorCode.GONE, 'The run this approval link belongs to no longer exists');
    const step = this.pendingStep(run, claim.nodeId);
    return { run, step };
  }

  /** The step still waiting for a decision, or why it is not. */
  private pendingStep(run: Run, nodeId: string, now = new Date()): StepRecord {
    const step = run.steps.find((s) => s.nodeId === nodeId);
    if (!step || step.type !== APPROVAL_TYPE) throw AppError.notFound('approval', `${run.id}/${nodeId}`);
    const output = decisionOf(step);
    if (output && (output.decision === 'approved' || output.decision === 'rejected')) {
      throw new AppError(
        ErrorCode.CONFLICT,
        `This approval was already decided: ${output.decision}${output.decidedBy ? ` by ${describe(output.decidedBy)}` : ''}`,
        {
          details: { runId: run.id, nodeId, decision: output.decision },
        },
      );
    }
    if (output && output.decision === 'timedOut') throw timedOut(run, nodeId);
    if (run.status === 'canceled')
      throw AppError.conflict(`Run ${run.id} was canceled: nothing is left to decide`, { runId: run.id, nodeId });
    if (step.status !== 'waiting' || run.status !== 'waiting' || !isPending(step) || !step.state) {
      throw AppError.conflict(`The approval at node "${nodeId}" of run ${run.id} is not waiting for a decision`, {
        runId: run.id,
        nodeId,
        status: step.status,
      });
    }
    // Its time is up, though the run has not gone on yet: the timeout decided.
    if (!run.resumeAt || run.resumeAt <= now) throw timedOut(run, nodeId);
    return step;
  }

  private async decide(run: Run, nodeId: string, request: DecisionRequest, decidedBy: DecidedBy): Promise<DecisionView> {
    const now = new Date();
    const step = this.pendingStep(run, nodeId, now);
    const pending = step.output as PendingRecord;
    const schema = isObject(pending.fields) ? pending.fields : null;
    const fields = this.checkFields(schema, request.fields);
    const sealer = stateSealer(this.cipher, run.workflowId);
    const onTimeout = (openKept(sealer, step.state!).ports.get('timedOut') ?? {}) as Record<string, unknown>;
    const decision = { decision: request.decision, decidedBy, decidedAt: now.toISOString(), fields, comment: request.comment ?? null };
    const output = { ...onTimeout, ...decision };
    const state = sealOutputs(sealer, { ports: new Map([[request.decision, output]]), until: now });
    if (state === null)
      throw new AppError(
        ErrorCode.PAYLOAD_TOO_LARGE,
        `The decision with the approval's input is too large to keep for the run to go on: send fewer or shorter fields`,
      );
    // The record: what it showed while pending (already masked) with the decision; the run records the whole output when it goes on.
    const recorded = { summary: pending.summary, expiresAt: pending.expiresAt, ...decision };
    const jobId = `${run.id}.a${now.getTime().toString(36)}${randomBytes(2).toString('hex')}`;
    if (!(await this.runs.decideWaitingStep(run.id, nodeId, step.state!, { state, output: recorded }, jobId, now))) {
      // Someone else decided (or the run moved on) since it was read: say which, as a fresh read sees it.
      const again = await this.runs.get(run.id);
      if (again) this.pendingStep(again, nodeId, now);
      throw AppError.conflict(`The approval at node "${nodeId}" of run ${run.id} is no longer waiting for a decision`, {
        runId: run.id,
        nodeId,
      });
    }
    try {
      await this.jobs.enqueue<RunJobData>(RUN_JOB, runJob(run), runJobOptions(run, jobId));
    } catch (error) {
      // The run is due in the store: the reconciler enqueues it (accepted means kept).
      this.logger.warn({ runId: run.id, err: error }, 'decided run has no job yet; the reconciler will enqueue it');
    }
    this.logger.info(
      {
        runId: run.id,
        workflowId: run.workflowId,
        nodeId,
        decision: request.decision,
        by: decidedBy.type === 'user' ? decidedBy.userId : 'link',
      },
      'approval decided',
    );
    return { runId: run.id, nodeId, ...decision };
  }

  /** The fields against the approval's schema (ajv); without a schema, none may be given. */
  private checkFields(schema: Record<string, unknown> | null, given: Record<string, unknown> | undefined): Record<string, unknown> | null {
    if (!schema) {
      if (given !== undefined && Object.keys(given).length > 0)
        throw AppError.validation([{ field: 'fields', reason: 'this approval asks for no fields' }]);
      return null;
    }
    const fields = given ?? {};
    let problems: SchemaProblem[];
    try {
      problems = schemaProblems(schema, fields);
    } catch (error) {
      throw AppError.conflict(`The approval's fields schema cannot be used: ${(error as Error).message}; fix the node's fields parameter`);
    }
    if (problems.length === 0) return fields;
    const errors: FieldError[] = problems.map((p) => ({
      field: ['fields', p.path, p.missing].filter(Boolean).join('.'),
      reason: p.message,
    }));
    throw AppError.validation(
      errors,
      `The fields do not match what the approval asks for: ${errors.map((e) => `${e.field} ${e.reason}`).join('; ')}`,
    );
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The decision a step records: on the step itself while the run has not gone on yet, then under
 * the output it went along (a node with several outputs records its output by name).
 */
function decisionOf(step: StepRecord): { decision?: unknown; decidedBy?: DecidedBy } | undefined {
  if (!isObject(step.output)) return undefined;
  if (typeof step.output.decision === 'string') return step.output;
  const routed = Object.values(step.output).find((value) => isObject(value) && typeof value.decision === 'string');
  return routed as { decision?: unknown; decidedBy?: DecidedBy } | undefined;
}

const isPending = (step: StepRecord): boolean => isObject(step.output) && step.output.status === 'pending';

const describe = (by: DecidedBy): string => (by.type === 'link' ? 'the holder of the approval link' : (by.email ?? by.name ?? by.userId));

const timedOut = (run: Run, nodeId: string) =>
  new AppError(ErrorCode.GONE, `The approval at node "${nodeId}" of run ${run.id} timed out: the run went on without a decision`, {
    details: { runId: run.id, nodeId },
  });

function pendingView(run: Run, step: StepRecord, workflowName: string | null, links: ApprovalLinks): PendingApproval {
  const pending = (isObject(step.output) ? step.output : {}) as Partial<PendingRecord>;
  const expiresAt = typeof pending.expiresAt === 'string' ? pending.expiresAt : (run.resumeAt?.toISOString() ?? '');
  return {
    runId: run.id,
    workflowId: run.workflowId,
    workflowName,
    nodeId: step.nodeId,
    summary: typeof pending.summary === 'string' ? pending.summary : '',
    fields: isObject(pending.fields) ? pending.fields : null,
    createdAt: step.startedAt?.toISOString() ?? null,
    expiresAt,
    approvalUrl: links.url({ runId: run.id, nodeId: step.nodeId, expiresAt: new Date(expiresAt) }),
  };
}
