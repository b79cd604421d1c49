import { Page, PageRequest } from '../common/page';
import type { WorkflowDefinition } from './workflow-definition.model';
import type { Role } from './membership.model';
import type { StartableWorkflow, WorkflowSettings } from './workflow.model';
import type {
  ActiveTriggers,
  VisibleWorkflow,
  Workflow,
  WorkflowSchedule,
  WorkflowTool,
  WorkflowVersion,
  WorkflowVersionSummary,
} from './workflow.model';

export interface ToolWorkflow {
  workflowId: string;
  name: string;
  tool: WorkflowTool;
}

export interface ScheduledWorkflow {
  workflowId: string;
  schedule: WorkflowSchedule;
}

/** A version about to be published: its number is the store's to give. */
export type NewVersion = Pick<WorkflowVersion, 'id' | 'definition' | 'createdBy' | 'createdAt'>;

export abstract class WorkflowStore {
  /** Creates the workflow and makes its creator the owner. */
  abstract create(workflow: Workflow): Promise<void>;
  abstract get(id: string): Promise<Workflow | null>;
  /**
   * What starting a run of the published version reads, each time, so a role removed or a version
   * published a moment ago counts at once: the workflow without its draft (which may be large, and
   * such a run never reads it) and `userId`'s role on it. Null when the workflow does not exist.
   */
  abstract startable(id: string, userId: string): Promise<{ workflow: StartableWorkflow; role: Role | null } | null>;
  /**
   * The workflow's settings alone (what the run worker follows: concurrency, step data, error
   * workflow), without its draft or anything else; undefined when the workflow does not exist.
   */
  abstract settings(id: string): Promise<WorkflowSettings | undefined>;
  /**
   * Workflows whose draft or active version holds `text` (a credential's quoted id, say), with
   * where: what "where is it used" answers.
   */
  abstract referencing(text: string): Promise<{ workflowId: string; name: string; inDraft: boolean; inActiveVersion: boolean }[]>;
  /** The names of the workflows among `ids` that exist, by id (for run listings). */
  abstract names(ids: readonly string[]): Promise<Map<string, string>>;
  /** Workflows the user holds a role on, newest first. */
  abstract listVisible(userId: string, page: PageRequest): Promise<Page<VisibleWorkflow>>;
  /** Replaces name and draft, saved by `savedBy`, and the settings when given; false when the workflow does not exist. */
  abstract updateDraft(
    id: string,
    name: string,
    draft: WorkflowDefinition,
    updatedAt: Date,
    savedBy: string,
    settings?: WorkflowSettings,
  ): Promise<boolean>;
  /**
   * Removes the workflow, its versions and memberships (runs are the RunStore's), and keeps its id
   * as deleted (wasDeleted).
   */
  abstract delete(id: string): Promise<boolean>;
  /**
   * Whether a workflow of this id was deleted from this store: a run's job left queued by the
   * deletion ends quietly, where one naming a run the store never had is tried again (RunWorker).
   */
  abstract wasDeleted(id: string): Promise<boolean>;
  /**
   * Keeps the id as deleted before the workflow's runs and the workflow itself go, so that a job
   * claimed in between (or after a crash between them) finds it deleted, not a stranger.
   */
  abstract markDeleted(id: string): Promise<void>;
  /**
   * Whether this store has or had (wasDeleted) the workflow: a job whose run is gone but whose
   * workflow is one of these is a run this store removed (pruned, deleted), not another store's.
   */
  abstract had(id: string): Promise<boolean>;
  /**
   * Stores `version` (the draft as the caller read and checked it) under the next version number
   * and makes it active, put in force by its creator, with what its trigger asks for (schedule,
   * tool), in one call: two
   * concurrent publishes get distinct numbers, and the triggers are never those of another
   * version. Null when the workflow does not exist.
   */
  abstract publish(workflowId: string, version: NewVersion, triggers: ActiveTriggers): Promise<WorkflowVersion | null>;
  abstract listVersions(workflowId: string): Promise<WorkflowVersionSummary[]>;
  abstract getVersion(workflowId: string, version: number): Promise<WorkflowVersion | null>;
  abstract getVersionById(versionId: string): Promise<WorkflowVersion | null>;
  /**
   * Makes an existing version the active one (rollback or roll forward), put in force by
   * `activatedBy`, with what its trigger asks for, in one write; false when it does not exist.
   */
  abstract activate(workflowId: string, version: number, now: Date, triggers: ActiveTriggers, activatedBy: string): Promise<boolean>;
  /** Every workflow with a published version in force: its id, name and that version's id. */
  abstract listActive(): Promise<{ workflowId: string; name: string; versionId: string }[]>;
  /** Every workflow whose active version starts runs on a schedule. */
  abstract listScheduled(): Promise<ScheduledWorkflow[]>;
  /** Every workflow whose active version is offered as an MCP tool (the callers' rights are checked above). */
  abstract listTools(): Promise<ToolWorkflow[]>;
}
