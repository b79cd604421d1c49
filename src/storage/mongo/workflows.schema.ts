import { Connection, Schema } from 'mongoose';

/**
 * User-shaped data (definitions, inputs, outputs, errors) is kept as JSON text: its keys come from
 * users and nodes, and MongoDB field names may not hold every string (`$`-prefixed, dotted).
 */
export interface WorkflowDoc {
  _id: string;
  name: string;
  ownerId: string;
  draftJson: string;
  activeVersionId: string | null;
  activeVersion: number | null;
  latestVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkflowVersionDoc {
  _id: string;
  workflowId: string;
  version: number;
  definitionJson: string;
  createdBy: string;
  createdAt: Date;
}

export interface RunDoc {
  _id: string;
  workflowId: string;
  runType: string;
  versionId: string | null;
  version: number | null;
  definitionJson: string | null;
  status: string;
  inputJson: string | null;
  startedBy: string;
  actingUserId: string;
  idempotencyKey: string | null;
  jobId: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  claims: number;
  cancelRequested: boolean;
  errorJson: string | null;
}

export interface RunStepDoc {
  runId: string;
  nodeId: string;
  position: number;
  type: string;
  nodeVersion: number;
  status: string;
  attempts: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  outputJson: string | null;
  errorJson: string | null;
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
    runType: { type: String, required: true, enum: ['test', 'production'] },
    versionId: { type: String, default: null },
    version: { type: Number, default: null },
    definitionJson: { type: String, default: null },
    status: { type: String, required: true, enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
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
