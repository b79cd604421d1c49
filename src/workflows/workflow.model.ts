import type { Role } from '../auth/membership.model';
import type { WorkflowDefinition, WorkflowSettings } from '../engine/workflow-definition.model';

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

export interface WorkflowSchedule {
  cron: string;
  timezone: string;
  /** The version it was read from: it is dropped when another version becomes active. */
  versionId: string;
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
