import type { WorkflowDefinition } from '../domain/workflow-definition.model';
import { Role } from '../domain/membership.model';
import type { Workflow, WorkflowVersion, WorkflowVersionSummary } from '../domain/workflow.model';
import { variableView } from './workflow-variables';

export const definitionView = (definition: WorkflowDefinition) => ({
  nodes: definition.nodes,
  edges: definition.edges,
  variables: definition.variables.map(variableView),
  ...(definition.pinnedData ? { pinnedData: definition.pinnedData } : {}),
  ...(definition.notes?.length ? { notes: definition.notes } : {}),
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
