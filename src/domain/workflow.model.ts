import type { Role } from './membership.model';
import type { WorkflowDefinition } from './workflow-definition.model';

export interface Workflow {
  id: string;
  name: string;
  ownerId: string;
  /** What test runs execute and PUT replaces; secret variables hold ciphertext. */
  draft: WorkflowDefinition;
  /** What production runs execute: null until something is published. */
  activeVersionId: string | null;
  activeVersion: number | null;
  /**
   * Who put the active version in force: published it, or activated it again. A run the service
   * starts on its own (schedule, error workflow) acts as this user; null until something is published.
   */
  activatedBy: string | null;
  /**
   * Who saved the draft last (created the workflow, or replaced the draft): whoever vouched for the
   * draft as it stands. A test run of the draft as another workflow's sub-workflow acts as them;
   * null for drafts saved before this was kept.
   */
  draftSavedBy: string | null;
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

/**
 * A workflow as a store read it, its draft parsed from `draftJson` when first read: starting a run
 * of the published version, the commonest read by far, never looks at the draft, and parsing it on
 * each call was a share of every webhook's CPU. A corrupt draft fails where it is read.
 */
export function withDraftJson(workflow: Omit<Workflow, 'draft'>, draftJson: string): Workflow {
  let draft: WorkflowDefinition | undefined;
  return Object.defineProperty(workflow, 'draft', {
    enumerable: true,
    configurable: true,
    get: () => (draft ??= JSON.parse(draftJson) as WorkflowDefinition),
    set: (value: WorkflowDefinition) => (draft = value),
  }) as Workflow;
}

/** A workflow's settings as a store keeps them (JSON, or nothing for none). */
export function settingsFromJson(json: string | null | undefined): WorkflowSettings {
  return json ? (JSON.parse(json) as WorkflowSettings) : {};
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
  /** When that version came in force (ISO 8601): its first tick is the first after this. Absent on schedules stored before it was kept. */
  since?: string;
}

export type VisibleWorkflow = Workflow & { role: Role };

/** What starting a run of the published version reads of its workflow (WorkflowStore.startable): no draft. */
export type StartableWorkflow = Pick<Workflow, 'id' | 'name' | 'activeVersionId' | 'activeVersion' | 'settings'>;

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

/** Workflow-level settings: not versioned, they apply to test and production runs from the moment they are saved. */
export interface WorkflowSettings {
  /** Runs of the workflow executing at once across all workers; more wait in the queue. */
  maxConcurrentRuns?: number;
  /**
   * Queued runs of the workflow beyond which callers are answered 429 with Retry-After; lowers the
   * service's RUNS_MAX_QUEUED_PER_WORKFLOW, never raises it.
   */
  maxQueuedRuns?: number;
  /** Webhook calls accepted per window; more are answered 429 with Retry-After. */
  rateLimit?: { requests: number; perSeconds: number };
  /** A workflow whose published version runs when a production run of this one fails. */
  errorWorkflowId?: string;
  /** What finished runs keep of their steps' inputs and outputs (statuses, timings and errors always stay). Default: all. */
  stepData?: { succeeded: StepDataPolicy; failed: StepDataPolicy };
}

export const STEP_DATA_POLICIES = ['all', 'none'] as const;
export type StepDataPolicy = (typeof STEP_DATA_POLICIES)[number];
