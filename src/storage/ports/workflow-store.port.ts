import { Page, PageRequest } from '../../common/pagination';
import type { WorkflowDefinition, WorkflowSettings } from './workflow-definition';
import { Role } from './membership-store.port';

export interface Workflow {
  id: string;
  name: string;
  ownerId: string;
  /** What test runs execute and PUT replaces; secret variables hold ciphertext. */
  draft: WorkflowDefinition;
  /** What production runs execute: null until something is published. */
  activeVersionId: string | null;
  activeVersion: number | null;
  /** Highest version number published so far (0 before the first). */
  latestVersion: number;
  settings: WorkflowSettings;
  /** The schedule of the active version's trigger, when it starts runs by itself. */
  schedule: WorkflowSchedule | null;
  /** The MCP tool the active version's trigger offers, when it does. */
  tool: WorkflowTool | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What the active version's trigger asks of the service besides its webhook. */
export interface ActiveTriggers {
  schedule: WorkflowSchedule | null;
  tool: WorkflowTool | null;
}

export interface WorkflowTool {
  /** The tool's name when the trigger sets one; otherwise it is made from the workflow's name. */
  name?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  versionId: string;
}

export interface ToolWorkflow {
  workflowId: string;
  name: string;
  tool: WorkflowTool;
}

export interface WorkflowSchedule {
  cron: string;
  timezone: string;
  /** The version it was read from: it is dropped when another version becomes active. */
  versionId: string;
}

export interface ScheduledWorkflow {
  workflowId: string;
  ownerId: string;
  schedule: WorkflowSchedule;
}

export type VisibleWorkflow = Workflow & { role: Role };

/** An immutable, numbered snapshot of a draft. */
export interface WorkflowVersion {
  id: string;
  workflowId: string;
  version: number;
  definition: WorkflowDefinition;
  createdBy: string;
  createdAt: Date;
}

export type WorkflowVersionSummary = Omit<WorkflowVersion, 'definition'>;

/** A version about to be published: its number is the store's to give. */
export type NewVersion = Pick<WorkflowVersion, 'id' | 'definition' | 'createdBy' | 'createdAt'>;

export abstract class WorkflowStore {
  /** Creates the workflow and makes its creator the owner. */
  abstract create(workflow: Workflow): Promise<void>;
  abstract get(id: string): Promise<Workflow | null>;
  /** Workflows the user holds a role on, newest first. */
  abstract listVisible(userId: string, page: PageRequest): Promise<Page<VisibleWorkflow>>;
  /** Replaces name and draft, and the settings when given; false when the workflow does not exist. */
  abstract updateDraft(id: string, name: string, draft: WorkflowDefinition, updatedAt: Date, settings?: WorkflowSettings): Promise<boolean>;
  /** Removes the workflow, its versions and memberships (runs are the RunStore's). */
  abstract delete(id: string): Promise<boolean>;
  /**
   * Stores `version` (the draft as the caller read and checked it) under the next version number
   * and makes it active with what its trigger asks for (schedule, tool), in one call: two
   * concurrent publishes get distinct numbers, and the triggers are never those of another
   * version. Null when the workflow does not exist.
   */
  abstract publish(workflowId: string, version: NewVersion, triggers: ActiveTriggers): Promise<WorkflowVersion | null>;
  abstract listVersions(workflowId: string): Promise<WorkflowVersionSummary[]>;
  abstract getVersion(workflowId: string, version: number): Promise<WorkflowVersion | null>;
  abstract getVersionById(versionId: string): Promise<WorkflowVersion | null>;
  /**
   * Makes an existing version the active one (rollback or roll forward) with what its trigger asks
   * for, in one write; false when it does not exist.
   */
  abstract activate(workflowId: string, version: number, now: Date, triggers: ActiveTriggers): Promise<boolean>;
  /** Every workflow whose active version starts runs on a schedule. */
  abstract listScheduled(): Promise<ScheduledWorkflow[]>;
  /** Every workflow whose active version is offered as an MCP tool (the callers' rights are checked above). */
  abstract listTools(): Promise<ToolWorkflow[]>;
}
