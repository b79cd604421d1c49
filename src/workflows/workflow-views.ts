import type { WorkflowDefinition } from '../engine/workflow-definition.model';
import { Role } from '../auth/membership.model';
import type { Run } from '../runs/run.model';
import type { StepRecord } from '../engine/step.model';
import type { Workflow, WorkflowVersion, WorkflowVersionSummary } from './workflow.model';
import { variableView } from './workflow-variables';

const iso = (date: Date | null) => date?.toISOString() ?? null;
const duration = (from: Date | null, to: Date | null) => (from && to ? to.getTime() - from.getTime() : null);

export const definitionView = (definition: WorkflowDefinition) => ({
  nodes: definition.nodes,
  edges: definition.edges,
  variables: definition.variables.map(variableView),
  ...(definition.pinnedData ? { pinnedData: definition.pinnedData } : {}),
});

export const workflowView = (workflow: Workflow, role: Role) => ({
  id: workflow.id,
  name: workflow.name,
  role,
  activeVersion: workflow.activeVersion,
  activatedBy: workflow.activatedBy,
  draftSavedBy: workflow.draftSavedBy,
  latestVersion: workflow.latestVersion,
  webhookPath: `/api/v1/workflows/${workflow.id}/runs`,
  settings: workflow.settings,
  schedule: workflow.schedule ? { cron: workflow.schedule.cron, timezone: workflow.schedule.timezone } : null,
  definition: definitionView(workflow.draft),
  createdAt: workflow.createdAt.toISOString(),
  updatedAt: workflow.updatedAt.toISOString(),
});

export const workflowSummaryView = (workflow: Workflow, role: Role) => {
  const { definition, ...summary } = workflowView(workflow, role);
  return { ...summary, nodeCount: definition.nodes.length };
};

export const versionSummaryView = (version: WorkflowVersionSummary, activeVersion: number | null) => ({
  id: version.id,
  version: version.version,
  active: version.version === activeVersion,
  createdBy: version.createdBy,
  createdAt: version.createdAt.toISOString(),
});

export const versionView = (version: WorkflowVersion, activeVersion: number | null) => ({
  ...versionSummaryView(version, activeVersion),
  definition: definitionView(version.definition),
});

const stepView = (step: StepRecord) => ({
  nodeId: step.nodeId,
  type: step.type,
  version: step.version,
  status: step.status,
  attempts: step.attempts,
  startedAt: iso(step.startedAt),
  finishedAt: iso(step.finishedAt),
  durationMs: duration(step.startedAt, step.finishedAt),
  ...(step.input !== undefined ? { input: step.input } : {}),
  ...(step.output !== undefined ? { output: step.output } : {}),
  error: step.error ?? null,
  ...(step.iterations !== undefined ? { iterations: step.iterations } : {}),
  ...(step.reused ? { reused: true } : {}),
  ...(step.subSteps?.length ? { subSteps: step.subSteps } : {}),
});

/** `workflowName`: the workflow's name now (null when it is gone), read by the list and the record. */
export const runSummaryView = (run: Run, workflowName: string | null = null) => ({
  id: run.id,
  workflowId: run.workflowId,
  workflowName,
  runType: run.runType,
  trigger: run.trigger,
  version: run.version,
  status: run.status,
  startedBy: run.startedBy,
  actingUserId: run.actingUserId,
  createdAt: run.createdAt.toISOString(),
  startedAt: iso(run.startedAt),
  finishedAt: iso(run.finishedAt),
  durationMs: duration(run.startedAt, run.finishedAt),
  cancelRequested: run.cancelRequested,
  error: run.error,
  resumeAt: iso(run.resumeAt),
  parentRunId: run.parentRunId,
  parentNodeId: run.parentNodeId,
  retryOf: run.retryOf,
  nodeTest: run.nodeTest,
});

export const runView = (run: Run, workflowName: string | null = null) => ({
  ...runSummaryView(run, workflowName),
  versionId: run.versionId,
  input: run.input ?? null,
  output: run.output ?? null,
  attempts: run.claims,
  steps: run.steps.map(stepView),
});

/** The webhook's 202 body. */
export const acceptedView = (run: Run) => ({
  id: run.id,
  runId: run.id,
  workflowId: run.workflowId,
  runType: run.runType,
  status: run.status,
});
