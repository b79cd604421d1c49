import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode, FieldError } from '../common/app-error';
import { AppConfig } from '../config/app-config';
import { Run, RunStatus, TERMINAL_RUN_STATUSES } from '../domain/run.model';
import { MembershipStore } from '../domain/membership-store.port';
import { ToolWorkflow, WorkflowStore } from '../domain/workflow-store.port';
import { ApprovalsService, Decision, DecisionView, WaitingApproval } from '../runs/approvals.service';
import { RunsService } from '../runs/runs.service';
import { SchemaProblem, schemaProblems } from '../sdk';

/** A workflow offered as an MCP tool, as one caller sees it. */
export interface WorkflowToolView {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  workflowId: string;
  /** The published version the tool was read from, which a call runs. */
  versionId: string;
}

/** What a call of a workflow tool gives back: the run's answer once it finished, or where it stands. */
export interface WorkflowToolCall {
  runId: string;
  status: string;
  output?: unknown;
  error?: { code: string; message: string } | null;
}

/**
 * A run its caller started through a workflow tool, as that caller follows it (an MCP task, a call
 * that reports progress or asks for an approval): never anyone else's.
 */
export interface ToolRunView {
  runId: string;
  workflowId: string;
  status: RunStatus;
  /** A cancel was asked for: a running run stops at its next step. */
  cancelRequested: boolean;
  createdAt: string;
  /** When anything last happened to it: it finished, or a step started or ended. */
  updatedAt: string;
  /** The run's output once it succeeded, else null. */
  output: unknown;
  error: { code: string; message: string } | null;
  /** How many steps finished, and the node running or waiting now. */
  progress: { done: number; node: string | null };
  /** The approval it waits at now, as the caller sees it. */
  approval: WaitingApproval | null;
  /** How long the run is kept once it ended (RUNS_RETENTION_DAYS); null when runs are kept for good. */
  keptForMs: number | null;
}

/** The names of the collection tools, which a workflow's tool may not take. */
const RESERVED_PREFIX = 'service_';
/** How long a read of every workflow tool serves (as long as other processes' changes take to be noticed). */
const TOOLS_FRESH_MS = 10_000;
const MAX_NAME = 64;

/**
 * Published or removed workflow tools, so MCP sessions of this process send `tools/list_changed`
 * at once; other processes notice within their next look (McpHttpEndpoints).
 */
@Injectable()
export class WorkflowToolEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  changed(): void {
    this.emitter.emit('changed');
  }

  onChange(listener: () => void): () => void {
    this.emitter.on('changed', listener);
    return () => this.emitter.off('changed', listener);
  }
}

/**
 * Workflows whose active version has an MCP trigger, offered as tools to users with at least the
 * viewer role on them; a call runs the active version as the caller with the arguments as input
 * and waits for its answer (MCP_TOOL_TIMEOUT_MS). Both doors use it: the MCP server in the app and
 * the REST API the stdio program calls.
 */
@Injectable()
export class WorkflowToolsService {
  private readonly timeoutMs: number;
  private readonly keptForMs: number | null;
  /** Every workflow tool, as last read; see `allTools`. */
  private tools?: { readAt: number; list: Promise<ToolWorkflow[]> };

  constructor(
    private readonly workflows: WorkflowStore,
    private readonly memberships: MembershipStore,
    private readonly runs: RunsService,
    private readonly approvals: ApprovalsService,
    events: WorkflowToolEvents,
    config: AppConfig,
  ) {
    this.timeoutMs = config.MCP_TOOL_TIMEOUT_MS;
    this.keptForMs = config.RUNS_RETENTION_DAYS > 0 ? config.RUNS_RETENTION_DAYS * 24 * 60 * 60 * 1000 : null;
    events.onChange(() => (this.tools = undefined));
  }

  async list(principal: Principal): Promise<WorkflowToolView[]> {
    const all = await this.allTools();
    if (!all.length) return [];
    const roles = await this.memberships.listForUser('workflow', principal.userId);
    return toolViews(all.filter((tool) => roles.has(tool.workflowId)));
  }

  /** A fingerprint of every workflow tool (ids and versions), read afresh, to tell when the lists changed. */
  async stamp(): Promise<string> {
    const all = await this.allTools(true);
    return all
      .map((tool) => `${tool.workflowId}@${tool.tool.versionId}:${tool.name}`)
      .sort()
      .join('|');
  }

  /**
   * Runs the tool and waits for its run (MCP_TOOL_TIMEOUT_MS at most): the REST door of a plain call.
   * @throws AppError NOT_FOUND for a tool the caller does not see, VALIDATION_FAILED for arguments the schema refuses
   */
  async call(principal: Principal, name: string, args: Record<string, unknown>): Promise<WorkflowToolCall> {
    const { runId } = await this.start(principal, name, args);
    const run = await this.runs.waitFor(runId, this.timeoutMs);
    if (!run) return { runId, status: 'running' };
    return {
      runId: run.id,
      status: run.status,
      output: run.output ?? null,
      error: run.error ? { code: run.error.code, message: run.error.message } : null,
    };
  }

  /**
   * Checks the arguments and starts the tool's run, answering at once: the run is in the store, so
   * `run` finds it from now on (an MCP task is created only once this returned).
   * @throws AppError NOT_FOUND for a tool the caller does not see, VALIDATION_FAILED for arguments the schema refuses
   */
  async start(principal: Principal, name: string, args: Record<string, unknown>): Promise<ToolRunView> {
    const tool = await this.find(principal, name);
    const problems = this.problems(tool, args);
    if (problems.length) throw AppError.validation(problems, `The arguments of ${name} do not match its input schema`);
    let accepted: { runId: string };
    try {
      accepted = await this.runs.startAsViewer(principal, tool.workflowId, tool.versionId, args);
    } catch (error) {
      // Changed through another process since the list was read: the next list reads afresh.
      if (error instanceof AppError && error.code === ErrorCode.CONFLICT) this.tools = undefined;
      throw error;
    }
    const createdAt = new Date().toISOString();
    return {
      runId: accepted.runId,
      workflowId: tool.workflowId,
      status: 'queued',
      cancelRequested: false,
      createdAt,
      updatedAt: createdAt,
      output: null,
      error: null,
      progress: { done: 0, node: null },
      approval: null,
      keptForMs: this.keptForMs,
    };
  }

  /** The tool `name` as the caller sees it. @throws AppError NOT_FOUND */
  async find(principal: Principal, name: string): Promise<WorkflowToolView> {
    const tool = (await this.list(principal)).find((candidate) => candidate.name === name);
    if (!tool) throw AppError.notFound('workflow tool', name);
    return tool;
  }

  /** A run the caller started through a workflow tool. @throws AppError NOT_FOUND for any other run */
  async run(principal: Principal, runId: string): Promise<ToolRunView> {
    return this.view(principal, await this.runs.ownToolRun(principal, runId));
  }

  /**
   * The caller's tool run once its status changed (it ended, began to wait at an approval or a Wait
   * node, or went on after one) or `ms` passed. Checks the caller before waiting.
   */
  async waitForRun(principal: Principal, runId: string, ms: number): Promise<ToolRunView> {
    const before = await this.runs.ownToolRun(principal, runId);
    if (ms <= 0 || TERMINAL_RUN_STATUSES.includes(before.status)) return this.view(principal, before);
    const run = (await this.runs.waitFor(runId, ms, before.status)) ?? (await this.runs.ownToolRun(principal, runId));
    return this.view(principal, run);
  }

  /** Cancels a run the caller started through a workflow tool (queued or waiting at once, running at its next step). */
  async cancelRun(principal: Principal, runId: string): Promise<ToolRunView> {
    await this.runs.cancelOwnToolRun(principal, runId);
    return this.run(principal, runId);
  }

  /** Decides the approval the caller's tool run waits at, as the caller (who needs the editor role, as for the inbox). */
  async decide(
    principal: Principal,
    runId: string,
    nodeId: string,
    request: { decision: Decision; fields?: Record<string, unknown>; comment?: string },
  ): Promise<DecisionView> {
    await this.runs.ownToolRun(principal, runId);
    return this.approvals.decideAsUser(principal, runId, nodeId, request);
  }

  private async view(principal: Principal, run: Run): Promise<ToolRunView> {
    let updated = run.finishedAt ?? run.startedAt ?? run.createdAt;
    let done = 0;
    let node: string | null = null;
    for (const step of run.steps) {
      for (const at of [step.startedAt, step.finishedAt]) if (at && at > updated) updated = at;
      if (step.status === 'running' || step.status === 'waiting') node = step.nodeId;
      else if (!step.reused) done++;
    }
    return {
      runId: run.id,
      workflowId: run.workflowId,
      status: run.status,
      cancelRequested: run.cancelRequested,
      createdAt: run.createdAt.toISOString(),
      updatedAt: updated.toISOString(),
      output: run.status === 'succeeded' ? (run.output ?? null) : null,
      error: run.error ? { code: run.error.code, message: run.error.message } : null,
      progress: { done, node },
      approval: await this.approvals.waitingFor(principal, run),
      keptForMs: this.keptForMs,
    };
  }

  /**
   * Every workflow tool, read from the store at most once per TOOLS_FRESH_MS rather than on every
   * `tools/list` and tool call: a publish or removal in this process clears it at once, one in another
   * process is seen within that time (as McpHttpEndpoints' stamp check, which reads afresh, tells sessions).
   */
  private allTools(afresh = false): Promise<ToolWorkflow[]> {
    const now = Date.now();
    if (afresh || !this.tools || now - this.tools.readAt >= TOOLS_FRESH_MS) {
      const list = this.workflows.listTools();
      const entry = { readAt: now, list };
      this.tools = entry;
      list.catch(() => {
        if (this.tools === entry) this.tools = undefined;
      });
    }
    return this.tools.list;
  }

  /** What the tool's input schema says of `args`, one entry per problem; none when they fit. */
  problems(tool: WorkflowToolView, args: Record<string, unknown>): FieldError[] {
    let problems: SchemaProblem[];
    try {
      problems = schemaProblems(tool.inputSchema, args);
    } catch (error) {
      throw AppError.conflict(
        `The input schema of ${tool.name} cannot be used: ${(error as Error).message}; fix the workflow's MCP trigger`,
      );
    }
    // A missing argument is named itself, not the object that lacks it.
    return problems.map((p) => ({ field: [p.path, p.missing].filter(Boolean).join('.') || '(arguments)', reason: p.message }));
  }
}

/**
 * Names from the trigger or the workflow's name, each once in the list a caller sees. A name that
 * two of the caller's workflows want goes to neither: each gets the end of its id appended. Which
 * workflow a name reaches must never depend on what others call their workflows or share with the
 * caller, or a workflow shared by someone else could take over the name of the caller's own tool.
 */
function toolViews(tools: ToolWorkflow[]): WorkflowToolView[] {
  const wanted = tools.map((tool) => ({ ...tool, want: wantedName(tool) }));
  const claims = new Map<string, number>();
  for (const { want } of wanted) claims.set(want, (claims.get(want) ?? 0) + 1);
  const taken = new Set(wanted.filter(({ want }) => claims.get(want) === 1).map(({ want }) => want));
  return wanted
    .sort((a, b) => a.name.localeCompare(b.name) || a.workflowId.localeCompare(b.workflowId))
    .map(({ workflowId, name, tool, want }) => {
      let toolName = want;
      if (claims.get(want)! > 1) {
        // Longer ends of the id until the name is free: ids are unique, so this ends.
        for (let length = 6; ; length += 4) {
          const end = workflowId.slice(-length);
          toolName = `${want.slice(0, MAX_NAME - end.length - 1)}_${end}`;
          if (!taken.has(toolName) || length >= workflowId.length) break;
        }
        taken.add(toolName);
      }
      return {
        name: toolName,
        title: name,
        description: tool.description ?? `Runs the workflow "${name}" and answers with its output.`,
        inputSchema: tool.inputSchema,
        workflowId,
        versionId: tool.versionId,
      };
    });
}

function wantedName({ name, tool }: ToolWorkflow): string {
  const wanted = tool.name ?? slug(name);
  return wanted.startsWith(RESERVED_PREFIX) ? `workflow_${wanted}`.slice(0, MAX_NAME) : wanted;
}

function slug(name: string): string {
  const words = name
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .toLowerCase()
    .split(/[\s-]+/)
    .filter(Boolean);
  return (words.join('_') || 'workflow').slice(0, MAX_NAME);
}
