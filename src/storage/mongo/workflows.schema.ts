import { Connection, Schema } from 'mongoose';
import { Run, RUN_STATUSES, RUN_TYPES, StepRecord } from '../ports/run-store.port';
import type { Workflow, WorkflowVersion } from '../ports/workflow-store.port';

/**
 * User-shaped data (definitions, inputs, outputs, errors) is kept as JSON text: its keys come from
 * users and nodes, and MongoDB field names may not hold every string (`$`-prefixed, dotted).
 */
/** The port's records keyed by our id as `_id`, with their user-shaped fields as JSON text. */
export type WorkflowDoc = Omit<Workflow, 'id' | 'draft'> & { _id: string; draftJson: string };
export type WorkflowVersionDoc = Omit<WorkflowVersion, 'id' | 'definition'> & { _id: string; definitionJson: string };
export type RunDoc = Omit<Run, 'id' | 'definition' | 'input' | 'error' | 'steps'> & {
  _id: string;
  definitionJson: string | null;
  inputJson: string | null;
  errorJson: string | null;
};
/** `nodeVersion`, since a step's `version` would read as the workflow's. */
export type RunStepDoc = Omit<StepRecord, 'version' | 'output' | 'error'> & { runId: string; nodeVersion: number; outputJson: string | null; errorJson: string | null };

const options = { versionKey: false, _id: false } as const;

const workflowSchema = new Schema<WorkflowDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    ownerId: { type: String, required: true },
    draftJson: { type: String, required: true },
    activeVersionId: { type: String, default: null },
    activeVersion: { type: Number, default: null },
    latestVersion: { type: Number, required: true, default: 0 },
    createdAt: { type: Date, required: true, index: true },
    updatedAt: { type: Date, required: true },
  },
  options,
);

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
    startedBy: { type: String, required: true },
    actingUserId: { type: String, required: true },
    idempotencyKey: { type: String, default: null },
    jobId: { type: String, required: true },
    createdAt: { type: Date, required: true },
    startedAt: { type: Date, default: null },
    finishedAt: { type: Date, default: null },
    leaseOwner: { type: String, default: null },
    leaseExpiresAt: { type: Date, default: null },
    claims: { type: Number, required: true, default: 0 },
    cancelRequested: { type: Boolean, required: true, default: false },
    errorJson: { type: String, default: null },
  },
  options,
);
runSchema.index({ workflowId: 1, createdAt: -1 });
runSchema.index({ status: 1, createdAt: 1 });
runSchema.index(
  { workflowId: 1, idempotencyKey: 1 },
  { unique: true, partialFilterExpression: { idempotencyKey: { $type: 'string' } } },
);

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
    outputJson: { type: String, default: null },
    errorJson: { type: String, default: null },
  },
  { versionKey: false },
);
stepSchema.index({ runId: 1, nodeId: 1 }, { unique: true });
stepSchema.index({ runId: 1, position: 1 });

export function workflowModels(connection: Connection) {
  return {
    workflows: connection.models.Workflow ?? connection.model<WorkflowDoc>('Workflow', workflowSchema, 'workflows'),
    versions:
      connection.models.WorkflowVersion ??
      connection.model<WorkflowVersionDoc>('WorkflowVersion', versionSchema, 'workflow_versions'),
    runs: connection.models.WorkflowRun ?? connection.model<RunDoc>('WorkflowRun', runSchema, 'workflow_runs'),
    steps: connection.models.WorkflowRunStep ?? connection.model<RunStepDoc>('WorkflowRunStep', stepSchema, 'workflow_run_steps'),
  };
}
