import { Injectable } from '@nestjs/common';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError, ErrorCode, isAppError } from '../common/app-error';
import { newId } from '../common/ids';
import { AppConfig } from '../config/app-config';
import { Page, PageRequest } from '../common/page';
import { NodeRegistry } from '../engine/node-registry';
import { CompiledWorkflow, CompileOptions, compileWorkflow, DefinitionProblem } from '../engine/workflow-compiler';
import { StickyNote, WorkflowDefinition, WorkflowNodeSpec, WorkflowVariable } from '../domain/workflow-definition.model';
import { WorkflowSettings } from '../domain/workflow.model';
import { RunStore } from '../domain/run-store.port';
import { ActiveTriggers, Workflow } from '../domain/workflow.model';
import { WorkflowStore } from '../domain/workflow-store.port';
import { SecretCipher } from '../common/secret-cipher';
import { CredentialsService } from '../credentials/credentials.service';
import { WorkflowToolEvents } from './workflow-tools.service';
import { sealVariables } from './workflow-variables';
import { versionSummaryView, versionView, workflowSummaryView, workflowView } from './workflow-views';
import { DefinitionDto, NodeSpecDto, StickyNoteDto, WorkflowSettingsDto } from './workflows.dto';

export type WorkflowView = ReturnType<typeof workflowView>;

/** A new workflow without a definition starts as a lone webhook trigger. */
const STARTER: DefinitionDto = { nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }], edges: [], variables: [] };

/** Workflows, drafts and versions as both doors (REST and MCP) see them; every method checks the caller's role. */
@Injectable()
export class WorkflowsService {
  /** AI Decide is accepted only where a language model is configured; a self-starting trigger's parameters must be fixed. */
  private readonly compileOptions: CompileOptions;

  constructor(
    private readonly workflows: WorkflowStore,
    private readonly runs: RunStore,
    private readonly access: AccessPolicy,
    private readonly registry: NodeRegistry,
    private readonly cipher: SecretCipher,
    private readonly toolEvents: WorkflowToolEvents,
    private readonly credentials: CredentialsService,
    config: AppConfig,
  ) {
    this.compileOptions = { aiDecide: Boolean(config.LLM_URL), fixedTriggerParameters: true };
  }

  async create(
    principal: Principal,
    name: string,
    definition?: DefinitionDto | null,
    settings?: WorkflowSettingsDto,
  ): Promise<WorkflowView> {
    const id = newId('wfl');
    const now = new Date();
    const workflow: Workflow = {
      id,
      name,
      ownerId: principal.userId,
      // Left out or null (an optional field of a JSON body), a lone webhook trigger.
      draft: await this.normalize(principal, definition ?? STARTER, [], id),
      activeVersionId: null,
      activeVersion: null,
      activatedBy: null,
      draftSavedBy: principal.userId,
      latestVersion: 0,
      settings: await this.settingsOf(principal, id, settings),
      schedule: null,
      tool: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.workflows.create(workflow);
    return workflowView(workflow, 'owner');
  }

  async list(principal: Principal, page: PageRequest): Promise<Page<ReturnType<typeof workflowSummaryView>>> {
    const result = await this.workflows.listVisible(principal.userId, page);
    return { items: result.items.map((w) => workflowSummaryView(w, w.role)), total: result.total };
  }

  async get(principal: Principal, id: string): Promise<WorkflowView> {
    const role = await this.access.require(principal, 'workflow', id, 'viewer');
    return workflowView(await this.load(id), role);
  }

  /** Replaces the draft (and the name and settings, when given). Published versions are untouched. */
  async update(
    principal: Principal,
    id: string,
    name: string | undefined,
    definition: DefinitionDto,
    settings?: WorkflowSettingsDto,
  ): Promise<WorkflowView> {
    const role = await this.access.require(principal, 'workflow', id, 'editor');
    const current = await this.load(id);
    const draft = await this.normalize(principal, definition, current.draft.variables, id);
    const updatedAt = new Date();
    const newSettings = settings ? await this.settingsOf(principal, id, settings, current.settings) : undefined;
    if (!(await this.workflows.updateDraft(id, name ?? current.name, draft, updatedAt, principal.userId, newSettings)))
      throw AppError.notFound('workflow', id);
    const saved = { ...current, name: name ?? current.name, draft, draftSavedBy: principal.userId, updatedAt };
    return workflowView({ ...saved, settings: newSettings ?? current.settings }, role);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.access.require(principal, 'workflow', id, 'owner');
    const { tool } = await this.load(id);
    // First: a job of its runs claimed before the workflow goes finds it deleted, and ends quietly.
    await this.workflows.markDeleted(id);
    await this.runs.deleteForWorkflow(id);
    await this.workflows.delete(id);
    if (tool) this.toolEvents.changed();
  }

  /**
   * Snapshots the draft as the next version and makes it what production runs execute, with its
   * trigger's schedule or tool, in one write: a failure leaves the previous version active.
   */
  async publish(principal: Principal, id: string) {
    await this.access.require(principal, 'workflow', id, 'editor');
    const workflow = await this.load(id);
    const versionId = newId('wfv');
    // The draft was valid when saved; node types may have changed since (a plugin removed).
    const now = new Date();
    const triggers = triggersOf(compileWorkflow(workflow.draft, this.registry, this.compileOptions), versionId, now);
    // Pinned data is for testing the draft: the version runs on what comes in, never on it.
    const { pinnedData: _pinned, ...published } = workflow.draft;
    const version = await this.workflows.publish(
      id,
      { id: versionId, definition: published, createdBy: principal.userId, createdAt: now },
      triggers,
    );
    if (!version) throw AppError.notFound('workflow', id);
    this.toolEvents.changed();
    return versionView(version, version.version);
  }

  async listVersions(principal: Principal, id: string) {
    await this.access.require(principal, 'workflow', id, 'viewer');
    const workflow = await this.load(id);
    const versions = await this.workflows.listVersions(id);
    return { items: versions.map((v) => versionSummaryView(v, workflow.activeVersion)), activeVersion: workflow.activeVersion };
  }

  async getVersion(principal: Principal, id: string, version: number) {
    await this.access.require(principal, 'workflow', id, 'viewer');
    const workflow = await this.load(id);
    const found = await this.workflows.getVersion(id, version);
    if (!found) throw AppError.notFound(`version ${version} of workflow`, id);
    return versionView(found, workflow.activeVersion);
  }

  /** Rollback (or roll forward): production runs execute this version from now on. */
  async activate(principal: Principal, id: string, version: number): Promise<WorkflowView> {
    const role = await this.access.require(principal, 'workflow', id, 'editor');
    const found = await this.workflows.getVersion(id, version);
    if (!found) throw AppError.notFound(`version ${version} of workflow`, id);
    const now = new Date();
    const triggers = triggersOf(compileWorkflow(found.definition, this.registry, this.compileOptions), found.id, now);
    if (!(await this.workflows.activate(id, version, now, triggers, principal.userId))) throw AppError.notFound('workflow', id);
    this.toolEvents.changed();
    return workflowView(await this.load(id), role);
  }

  /**
   * The stored settings. An error workflow must be another workflow the caller may run (editor):
   * naming it makes the service start it, acting as whoever put its version in force. One that
   * was already set stays without a check, so an editor saving other settings is not refused.
   */
  private async settingsOf(
    principal: Principal,
    id: string,
    dto: WorkflowSettingsDto | undefined,
    current?: WorkflowSettings,
  ): Promise<WorkflowSettings> {
    const errorWorkflowId = dto?.errorWorkflowId ?? undefined;
    if (errorWorkflowId !== undefined && errorWorkflowId !== current?.errorWorkflowId) {
      const field = 'settings.errorWorkflowId';
      if (errorWorkflowId === id)
        throw AppError.validation([{ field, reason: 'must name another workflow: a workflow cannot handle its own failures' }]);
      try {
        await this.access.require(principal, 'workflow', errorWorkflowId, 'editor');
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        throw AppError.validation([{ field, reason: `must name a workflow you hold the editor role on (${error.message})` }]);
      }
    }
    return {
      // null, which an optional field lets through, is no setting, as left out is.
      ...(dto?.maxConcurrentRuns != null ? { maxConcurrentRuns: dto.maxConcurrentRuns } : {}),
      ...(dto?.maxQueuedRuns != null ? { maxQueuedRuns: dto.maxQueuedRuns } : {}),
      ...(dto?.rateLimit ? { rateLimit: { requests: dto.rateLimit.requests, perSeconds: dto.rateLimit.perSeconds } } : {}),
      ...(errorWorkflowId !== undefined ? { errorWorkflowId } : {}),
      ...(dto?.stepData ? { stepData: { succeeded: dto.stepData.succeeded ?? 'all', failed: dto.stepData.failed ?? 'all' } } : {}),
    };
  }

  private async load(id: string): Promise<Workflow> {
    const workflow = await this.workflows.get(id);
    if (!workflow) throw AppError.notFound('workflow', id);
    return workflow;
  }

  /**
   * The stored form of a definition: only known fields, node versions pinned to what is loaded now
   * (so a newer plugin never changes a saved workflow), secrets sealed. Every problem, of the graph,
   * the parameters or the variables, comes back in one 400.
   */
  private async normalize(
    principal: Principal,
    input: DefinitionDto,
    previousVariables: WorkflowVariable[],
    workflowId: string,
  ): Promise<WorkflowDefinition> {
    const { variables, problems } = sealVariables(input.variables ?? [], previousVariables, workflowId, this.cipher);
    const definition: WorkflowDefinition = {
      nodes: input.nodes.map((node) => this.nodeSpec(node)),
      edges: (input.edges ?? []).map((edge) => ({
        from: edge.from,
        to: edge.to,
        ...(edge.output !== undefined ? { output: edge.output } : {}),
      })),
      variables,
      ...(input.pinnedData && Object.keys(input.pinnedData).length ? { pinnedData: { ...input.pinnedData } } : {}),
      ...(input.notes?.length ? { notes: input.notes.map(stickyNote) } : {}),
    };
    const noteIds = new Set<string>();
    (definition.notes ?? []).forEach((note, i) => {
      if (noteIds.has(note.id)) problems.push({ field: `notes[${i}].id`, reason: `duplicate note id "${note.id}"` });
      noteIds.add(note.id);
    });
    const nodeIds = new Set(definition.nodes.map((node) => node.id));
    for (const key of Object.keys(definition.pinnedData ?? {})) {
      if (!nodeIds.has(key)) problems.push({ field: `pinnedData.${key}`, reason: 'names no node of the workflow' });
    }
    let graphProblems: DefinitionProblem[] = [];
    try {
      compileWorkflow(definition, this.registry, this.compileOptions);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== ErrorCode.VALIDATION_FAILED) throw error;
      graphProblems = (error.details as { fields: DefinitionProblem[] }).fields;
    }
    const all = [
      ...graphProblems,
      ...problems,
      ...(await this.credentialProblems(principal, definition)),
      ...(await this.collectionProblems(principal, definition)),
    ];
    if (all.length) {
      throw new AppError(ErrorCode.VALIDATION_FAILED, `The workflow definition has ${all.length} problem(s)`, { details: { fields: all } });
    }
    return definition;
  }

  /**
   * A node's credential is chosen by whoever saves the workflow, among those they may use (viewer),
   * of a type the parameter accepts: nobody puts a credential they cannot use into a workflow.
   */
  private async credentialProblems(principal: Principal, definition: WorkflowDefinition): Promise<DefinitionProblem[]> {
    const problems: DefinitionProblem[] = [];
    for (const [index, node] of definition.nodes.entries()) {
      const registered = this.registry.get(node.type, node.version);
      for (const [name, types] of registered?.credentialParameters ?? []) {
        for (const { id, at } of namedCredentials(node.parameters[name])) {
          const field = `nodes[${index}].parameters.${name}${at}`;
          const type = await this.credentials.typeFor(principal.userId, id);
          if (type === null)
            problems.push({
              field,
              nodeId: node.id,
              reason: `credential ${id} does not exist or you hold no role on it: you may only choose a credential you can use`,
            });
          else if (types && !types.includes(type))
            problems.push({
              field,
              nodeId: node.id,
              reason: `credential ${id} is a ${type} credential; this parameter takes ${types.join(', ')}`,
            });
        }
      }
    }
    return problems;
  }

  /**
   * A collection a node names as a fixed value is one its saver holds the role on that the node
   * needs (viewer to read, editor to add), as for credentials: nobody puts into a workflow a
   * collection they could not use themselves. What an expression names is checked at run time.
   */
  private async collectionProblems(principal: Principal, definition: WorkflowDefinition): Promise<DefinitionProblem[]> {
    const problems: DefinitionProblem[] = [];
    for (const [index, node] of definition.nodes.entries()) {
      const registered = this.registry.get(node.type, node.version);
      for (const [name, role] of registered?.collectionParameters ?? []) {
        if ((node.parameterMode?.[name] ?? 'fixed') !== 'fixed') continue;
        const value = node.parameters[name];
        const named =
          typeof value === 'string' ? [{ id: value, at: '' }] : Array.isArray(value) ? value.map((id, i) => ({ id, at: `[${i}]` })) : [];
        for (const { id, at } of named) {
          if (typeof id !== 'string' || !id) continue;
          try {
            await this.access.require(principal, 'collection', id, role);
          } catch (error) {
            if (!isAppError(error)) throw error;
            problems.push({
              field: `nodes[${index}].parameters.${name}${at}`,
              nodeId: node.id,
              reason:
                error.code === ErrorCode.NOT_FOUND
                  ? `collection ${id} does not exist or you hold no role on it: you may only name a collection you can ${role === 'editor' ? 'add files to' : 'read'}`
                  : `collection ${id} needs the ${role} role, which you do not hold on it`,
            });
          }
        }
      }
    }
    return problems;
  }

  private nodeSpec(node: NodeSpecDto): WorkflowNodeSpec {
    const version = node.version ?? this.registry.get(node.type)?.definition.version;
    return {
      id: node.id,
      ...(node.name !== undefined ? { name: node.name } : {}),
      type: node.type,
      ...(version !== undefined ? { version } : {}),
      parameters: { ...(node.parameters ?? {}) },
      ...(node.parameterMode ? { parameterMode: { ...node.parameterMode } } : {}),
      ...(node.runMode ? { runMode: node.runMode } : {}),
      ...(node.onError !== undefined ? { onError: node.onError } : {}),
      ...(node.continueOnError !== undefined ? { continueOnError: node.continueOnError } : {}),
      ...(node.retryOnFail !== undefined ? { retryOnFail: node.retryOnFail } : {}),
      ...(node.maxTries !== undefined ? { maxTries: node.maxTries } : {}),
      ...(node.waitBetweenTries !== undefined ? { waitBetweenTries: node.waitBetweenTries } : {}),
      ...(node.backoff !== undefined ? { backoff: node.backoff } : {}),
      ...(node.retry
        ? {
            retry: {
              maxAttempts: node.retry.maxAttempts,
              ...(node.retry.backoffMs !== undefined ? { backoffMs: node.retry.backoffMs } : {}),
            },
          }
        : {}),
      ...(node.timeoutMs !== undefined ? { timeoutMs: node.timeoutMs } : {}),
      ...(node.disabled ? { disabled: true } : {}),
      ...(node.position ? { position: { x: node.position.x, y: node.position.y } } : {}),
    };
  }
}

/**
 * What a version's trigger asks for besides the webhook (a schedule, an MCP tool), read from its
 * parameters, which the compile options keep fixed for such a trigger.
 */
function triggersOf(plan: CompiledWorkflow, versionId: string, since: Date): ActiveTriggers {
  const trigger = plan.trigger.node.definition.trigger;
  const params = plan.trigger.staticParams;
  if (typeof trigger !== 'object' || !params) return { schedule: null, tool: null };
  const schedule = trigger.schedule?.(params);
  const tool = trigger.tool?.(params);
  return {
    schedule: schedule ? { cron: schedule.cron, timezone: schedule.timezone ?? 'UTC', versionId, since: since.toISOString() } : null,
    tool: tool ? { ...tool, versionId } : null,
  };
}

/** The credential ids a credential parameter names: its value, or each entry's `credential` in a list (`credentialItems`). */
function namedCredentials(value: unknown): { id: string; at: string }[] {
  if (typeof value === 'string') return value ? [{ id: value, at: '' }] : [];
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry, index) => {
    const id = typeof entry === 'object' && entry !== null ? (entry as { credential?: unknown }).credential : undefined;
    return typeof id === 'string' && id ? [{ id, at: `[${index}].credential` }] : [];
  });
}

/** A sticky note with only its known fields. */
const stickyNote = (note: StickyNoteDto): StickyNote => ({
  id: note.id,
  text: note.text,
  position: { x: note.position.x, y: note.position.y },
  width: note.width,
  height: note.height,
});
