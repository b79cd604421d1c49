// Run and step documents: how the Mongo run store maps them to and from the domain's records, and
// the filters its queries share. The store itself is mongo-run-store.adapter.ts.
import { AnyBulkWriteOperation } from 'mongoose';
import type { WorkflowDefinition } from '../../domain/workflow-definition.model';
import type { RunCursor } from '../../domain/run-store.port';
import type { Run } from '../../domain/run.model';
import { type RunError, type StepRecord, stepJson } from '../../domain/step.model';
import type { RunDoc, RunStepDoc } from './workflows.schema';

export const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));
const parsed = <T>(text: string | null | undefined): T | undefined => (text == null ? undefined : (JSON.parse(text) as T));

export const toRun = (doc: RunDoc, steps: StepRecord[] = []): Run => ({
  id: doc._id,
  workflowId: doc.workflowId,
  runType: doc.runType,
  versionId: doc.versionId ?? null,
  version: doc.version ?? null,
  definition: parsed<WorkflowDefinition>(doc.definitionJson) ?? null,
  status: doc.status,
  input: parsed(doc.inputJson),
  sealedInput: doc.sealedInput ?? null,
  startedBy: doc.startedBy,
  // Runs stored before triggers were kept started by webhook, unless they say otherwise.
  trigger: doc.trigger ?? (doc.parentRunId ? 'sub-workflow' : doc.retryOf ? 'retry' : 'webhook'),
  actingUserId: doc.actingUserId,
  idempotencyKey: doc.idempotencyKey ?? null,
  jobId: doc.jobId,
  createdAt: doc.createdAt,
  startedAt: doc.startedAt ?? null,
  finishedAt: doc.finishedAt ?? null,
  leaseOwner: doc.leaseOwner ?? null,
  leaseExpiresAt: doc.leaseExpiresAt ?? null,
  claims: doc.claims ?? 0,
  leaseLosses: doc.leaseLosses ?? 0,
  cancelRequested: doc.cancelRequested === true,
  error: parsed<RunError>(doc.errorJson) ?? null,
  resumeAt: doc.resumeAt ?? null,
  ...(doc.outputJson != null ? { output: JSON.parse(doc.outputJson) } : {}),
  parentRunId: doc.parentRunId ?? null,
  parentNodeId: doc.parentNodeId ?? null,
  depth: doc.depth ?? 0,
  retryOf: doc.retryOf ?? null,
  nodeTest: doc.nodeTest ?? null,
  steps,
});

export const toStep = (doc: RunStepDoc): StepRecord => ({
  nodeId: doc.nodeId,
  position: doc.position,
  type: doc.type,
  version: doc.nodeVersion,
  status: doc.status,
  attempts: doc.attempts,
  startedAt: doc.startedAt ?? null,
  finishedAt: doc.finishedAt ?? null,
  ...(doc.inputJson != null ? { input: JSON.parse(doc.inputJson) } : {}),
  ...(doc.outputJson != null ? { output: JSON.parse(doc.outputJson) } : {}),
  error: parsed(doc.errorJson) ?? null,
  ...(doc.iterations != null ? { iterations: doc.iterations } : {}),
  ...(doc.reused ? { reused: true } : {}),
  ...(doc.state != null ? { state: doc.state } : {}),
  ...(doc.subStepsJson != null ? { subSteps: JSON.parse(doc.subStepsJson) } : {}),
});

/** Where a claim may take a run from: queued, waiting and due, or running under a lease that lapsed or is ours. */
export const claimable = (id: string, owner: string, now: Date) => ({
  _id: id,
  $or: [
    { status: 'queued' },
    { status: 'waiting', resumeAt: { $lte: now } },
    { status: 'running', $or: [{ leaseExpiresAt: { $lt: now } }, { leaseOwner: owner }] },
  ],
});

/** The keyset of the page after `after`, ordered by `field` then `_id`. */
export const pageAfter = (field: 'createdAt' | 'resumeAt', after?: RunCursor) =>
  after ? { $or: [{ [field]: { $gt: after.at } }, { [field]: after.at, _id: { $gt: after.id } }] } : {};

export const toRunDoc = (run: Run): RunDoc => {
  const { id, definition, input, error, output, steps: _steps, ...fields } = run;
  return {
    _id: id,
    ...fields,
    definitionJson: json(definition),
    inputJson: input === undefined ? null : JSON.stringify(input),
    errorJson: json(error),
    outputJson: output === undefined ? null : JSON.stringify(output),
  };
};

/** One upsert per step, keyed by run and node: a step recorded again replaces what was kept. */
export const stepUpserts = (runId: string, steps: StepRecord[]): AnyBulkWriteOperation<RunStepDoc>[] =>
  steps.map((step) => ({
    updateOne: {
      filter: { runId, nodeId: step.nodeId },
      update: {
        $set: {
          position: step.position,
          type: step.type,
          nodeVersion: step.version,
          status: step.status,
          attempts: step.attempts,
          startedAt: step.startedAt,
          finishedAt: step.finishedAt,
          inputJson: stepJson(step, 'input'),
          outputJson: stepJson(step, 'output'),
          errorJson: json(step.error),
          iterations: step.iterations ?? null,
          reused: step.reused === true,
          state: step.state ?? null,
          subStepsJson: step.subSteps?.length ? JSON.stringify(step.subSteps) : null,
        },
      },
      upsert: true,
    },
  }));
