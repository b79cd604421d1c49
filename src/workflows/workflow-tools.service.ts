import { Injectable } from '@nestjs/common';
import Ajv, { ValidateFunction } from 'ajv';
import { EventEmitter } from 'node:events';
import { Principal } from '../auth/principal';
import { AppError, FieldError } from '../common/app-error';
import { AppConfig } from '../config/app-config';
import { LruCache } from '../common/lru-cache';
import { MembershipStore } from '../storage/ports/membership-store.port';
import { ToolWorkflow, WorkflowStore } from '../storage/ports/workflow-store.port';
import { RunsService } from './runs.service';

/** A workflow offered as an MCP tool, as one caller sees it. */
export interface WorkflowToolView {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  workflowId: string;
}

/** What a call of a workflow tool gives back: the run's answer once it finished, or where it stands. */
export interface WorkflowToolCall {
  runId: string;
  status: string;
  output?: unknown;
  error?: { code: string; message: string } | null;
}

/** The names of the collection tools, which a workflow's tool may not take. */
const RESERVED_PREFIX = 'service_';
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
  private readonly validators = new LruCache<string, ValidateFunction>(256);
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly timeoutMs: number;

  constructor(
    private readonly workflows: WorkflowStore,
    private readonly memberships: MembershipStore,
    private readonly runs: RunsService,
    config: AppConfig,
  ) {
    this.timeoutMs = config.MCP_TOOL_TIMEOUT_MS;
  }

  async list(principal: Principal): Promise<WorkflowToolView[]> {
    const [all, roles] = await Promise.all([this.workflows.listTools(), this.memberships.listForUser('workflow', principal.userId)]);
    return toolViews(all.filter((tool) => roles.has(tool.workflowId)));
  }

  /** A fingerprint of every workflow tool (ids and versions), to tell when the lists changed. */
  async stamp(): Promise<string> {
    const all = await this.workflows.listTools();
    return all
      .map((tool) => `${tool.workflowId}@${tool.tool.versionId}:${tool.name}`)
      .sort()
      .join('|');
  }

  /** @throws AppError NOT_FOUND for a tool the caller does not see, VALIDATION_FAILED for arguments the schema refuses */
  async call(principal: Principal, name: string, args: Record<string, unknown>): Promise<WorkflowToolCall> {
    const tool = (await this.list(principal)).find((candidate) => candidate.name === name);
    if (!tool) throw AppError.notFound('workflow tool', name);
    const problems = this.check(tool, args);
    if (problems.length) throw AppError.validation(problems, `The arguments of ${name} do not match its input schema`);
    const accepted = await this.runs.startAsViewer(principal, tool.workflowId, args);
    const run = await this.runs.waitFor(accepted.runId, this.timeoutMs / 1000);
    if (!run) return { runId: accepted.runId, status: 'running' };
    return { runId: run.id, status: run.status, output: run.output ?? null, error: run.error ? { code: run.error.code, message: run.error.message } : null };
  }

  private check(tool: WorkflowToolView, args: Record<string, unknown>): FieldError[] {
    const key = `${tool.workflowId}:${JSON.stringify(tool.inputSchema)}`;
    let validate = this.validators.get(key);
    if (!validate) {
      try {
        validate = this.ajv.compile(tool.inputSchema);
      } catch (error) {
        throw AppError.conflict(`The input schema of ${tool.name} cannot be used: ${(error as Error).message}; fix the workflow's MCP trigger`);
      }
      this.validators.set(key, validate);
    }
    if (validate(args)) return [];
    return (validate.errors ?? []).map((e) => ({ field: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(arguments)', reason: e.message ?? 'is invalid' }));
  }
}

/** Names from the trigger or the workflow's name, each once in the list a caller sees. */
function toolViews(tools: ToolWorkflow[]): WorkflowToolView[] {
  const taken = new Set<string>();
  return tools
    .sort((a, b) => a.name.localeCompare(b.name) || a.workflowId.localeCompare(b.workflowId))
    .map(({ workflowId, name, tool }) => {
      let toolName = tool.name ?? slug(name);
      if (toolName.startsWith(RESERVED_PREFIX)) toolName = `workflow_${toolName}`.slice(0, MAX_NAME);
      if (taken.has(toolName)) toolName = `${toolName.slice(0, MAX_NAME - 7)}_${workflowId.slice(-6)}`;
      taken.add(toolName);
      return { name: toolName, title: name, description: tool.description ?? `Runs the workflow "${name}" and answers with its output.`, inputSchema: tool.inputSchema, workflowId };
    });
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
