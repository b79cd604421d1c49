import { Connection, Schema } from 'mongoose';
import { Run, RUN_STATUSES, RUN_TRIGGERS, RUN_TYPES } from '../../domain/run.model';
import { StepRecord } from '../../domain/step.model';
import type { Workflow, WorkflowVersion } from '../../domain/workflow.model';

/**
 * User-shaped data (definitions, inputs, outputs, errors) is kept as JSON text: its keys come from
 * users and nodes, and MongoDB field names may not hold every string (`$`-prefixed, dotted).
 */
/** The port's records keyed by our id as `_id`, with their user-shaped fields as JSON text. */
/** A tool's input schema is user JSON: kept as text like definitions. */
export type WorkflowDoc = Omit<Workflow, 'id' | 'draft' | 'settings' | 'tool'> & {
  _id: string;
  draftJson: string;
  settingsJson?: string | null;
  toolJson?: string | null;
};
export type WorkflowVersionDoc = Omit<WorkflowVersion, 'id' | 'definition'> & { _id: string; definitionJson: string };
export type RunDoc = Omit<Run, 'id' | 'definition' | 'input' | 'error' | 'steps' | 'output'> & {
  _id: string;
  definitionJson: string | null;
  inputJson: string | null;
  errorJson: string | null;
  outputJson?: string | null;
  /** The run holds a place in its workflow's concurrency slots (`workflow_run_slots`). */
  slotHeld?: boolean;
  /** Queued (or due waiting) for a place under its workflow's concurrency limit. */
  parked?: boolean;
};
/** `nodeVersion`, since a step's `version` would read as the workflow's. */
export type RunStepDoc = Omit<StepRecord, 'version' | 'input' | 'output' | 'error' | 'iterations' | 'subSteps'> & {
  runId: string;
  subStepsJson?: string | null;
  nodeVersion: number;
  inputJson?: string | null;
  outputJson: string | null;
  errorJson: string | null;
  iterations?: number | null;
};

/** The runs of one workflow holding a place under its concurrency limit, each until its lease ends. */
export interface RunSlotsDoc {
  _id: string;
  holders: { runId: string; until: Date }[];
}

const options = { versionKey: false, _id: false } as const;

const workflowSchema = new Schema<WorkflowDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    ownerId: { type: String, required: true },
    draftJson: { type: String, required: true },
    activeVersionId: { type: String, default: null },
    activeVersion: { type: Number, default: null },
    // Absent on workflows published before it was kept: the scheduler then reads the active version's creator.
    activatedBy: { type: String, default: null },
    // Absent on drafts saved before it was kept: a sub-workflow test run of such a draft is refused.
    draftSavedBy: { type: String, default: null },
    latestVersion: { type: Number, required: true, default: 0 },
    settingsJson: { type: String, default: null },
    // Read by the scheduler only; cron and time zone are plain strings, safe as field values.
    schedule: { type: Schema.Types.Mixed, default: null },
    toolJson: { type: String, default: null },
    createdAt: { type: Date, required: true, index: true },
    updatedAt: { type: Date, required: true },
  },
  options,
);
workflowSchema.index({ 'schedule.versionId': 1 }, { partialFilterExpression: { schedule: { $type: 'object' } } });

const versionSchema = new Schema<WorkflowVersionDoc>(
  {
    _id: { type: String, required: true },
    workflowId: { type: String, required: true },
    version: { type: Number, required: true },
    definitionJson: { type: String, required: true },
    createdBy: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  options,
);
versionSchema.index({ workflowId: 1, version: 1 }, { unique: true });

const runSchema = new Schema<RunDoc>(
  {
    _id: { type: String, required: true },
    workflowId: { type: String, required: true },
    runType: { type: String, required: true, enum: RUN_TYPES },
    versionId: { type: String, default: null },
    version: { type: Number, default: null },
    definitionJson: { type: String, default: null },
    status: { type: String, required: true, enum: RUN_STATUSES },
    inputJson: { type: String, default: null },
    sealedInput: { type: String, default: null },
    startedBy: { type: String, required: true },
    trigger: { type: String, required: true, enum: RUN_TRIGGERS, default: 'webhook' },
    actingUserId: { type: String, required: true },
    idempotencyKey: { type: String, default: null },
    jobId: { type: String, required: true },
    createdAt: { type: Date, required: true },
    startedAt: { type: Date, default: null },
    finishedAt: { type: Date, default: null },
    leaseOwner: { type: String, default: null },
    leaseExpiresAt: { type: Date, default: null },
    claims: { type: Number, required: true, default: 0 },
    leaseLosses: { type: Number, required: true, default: 0 },
    cancelRequested: { type: Boolean, required: true, default: false },
    errorJson: { type: String, default: null },
    resumeAt: { type: Date, default: null },
    outputJson: { type: String, default: null },
    parentRunId: { type: String, default: null },
    parentNodeId: { type: String, default: null },
    depth: { type: Number, required: true, default: 0 },
    retryOf: { type: String, default: null },
    // { nodeId, andAfter }: plain values, safe as fields.
    nodeTest: { type: Schema.Types.Mixed, default: null },
    slotHeld: { type: Boolean, default: false },
    parked: { type: Boolean, default: false },
  },
  options,
);
runSchema.index({ workflowId: 1, createdAt: -1 });
// A workflow's runs in one status (GET /runs?workflowId=&status=), page and count, without reading every run of that status (as SQLite's migration 270).
runSchema.index({ workflowId: 1, status: 1, createdAt: -1, _id: -1 });
runSchema.index({ parentRunId: 1 }, { partialFilterExpression: { parentRunId: { $type: 'string' } } });
runSchema.index({ workflowId: 1, createdAt: 1, _id: 1 }, { partialFilterExpression: { parked: true } });
runSchema.index({ status: 1, createdAt: 1, _id: 1 });
// Admission control counts one workflow's queued runs on every webhook call.
runSchema.index({ workflowId: 1, createdAt: 1 }, { partialFilterExpression: { status: 'queued' } });
// ...and one acting user's, for their share of the service's limit.
runSchema.index({ actingUserId: 1, createdAt: 1 }, { partialFilterExpression: { status: 'queued' } });
runSchema.index({ status: 1, resumeAt: 1, _id: 1 });
runSchema.index({ workflowId: 1, idempotencyKey: 1 }, { unique: true, partialFilterExpression: { idempotencyKey: { $type: 'string' } } });

const stepSchema = new Schema<RunStepDoc>(
  {
    runId: { type: String, required: true },
    nodeId: { type: String, required: true },
    position: { type: Number, required: true },
    type: { type: String, required: true },
    nodeVersion: { type: Number, required: true },
    status: { type: String, required: true },
    attempts: { type: Number, required: true },
    startedAt: { type: Date, default: null },
    finishedAt: { type: Date, default: null },
    inputJson: { type: String, default: null },
    outputJson: { type: String, default: null },
    errorJson: { type: String, default: null },
    iterations: { type: Number, default: null },
    reused: { type: Boolean, default: false },
    state: { type: String, default: null },
    subStepsJson: { type: String, default: null },
  },
  { versionKey: false },
);
stepSchema.index({ runId: 1, nodeId: 1 }, { unique: true });
stepSchema.index({ runId: 1, position: 1 });
// The approvals inbox: the few steps waiting for a decision, by type.
stepSchema.index({ type: 1, runId: 1 }, { partialFilterExpression: { status: 'waiting' } });

/** The id of a deleted workflow (WorkflowStore.wasDeleted). */
export interface DeletedWorkflowDoc {
  _id: string;
  deletedAt: Date;
}

const deletedWorkflowSchema = new Schema<DeletedWorkflowDoc>({ _id: String, deletedAt: Date }, { versionKey: false });

export function workflowModels(connection: Connection) {
  return {
    workflows: connection.models.Workflow ?? connection.model<WorkflowDoc>('Workflow', workflowSchema, 'workflows'),
    versions:
      connection.models.WorkflowVersion ?? connection.model<WorkflowVersionDoc>('WorkflowVersion', versionSchema, 'workflow_versions'),
    runs: connection.models.WorkflowRun ?? connection.model<RunDoc>('WorkflowRun', runSchema, 'workflow_runs'),
    steps: connection.models.WorkflowRunStep ?? connection.model<RunStepDoc>('WorkflowRunStep', stepSchema, 'workflow_run_steps'),
    deletedWorkflows:
      connection.models.DeletedWorkflow ??
      connection.model<DeletedWorkflowDoc>('DeletedWorkflow', deletedWorkflowSchema, 'deleted_workflows'),
  };
}
