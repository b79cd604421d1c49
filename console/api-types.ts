/** Shapes of the REST API's answers, as the console reads them. */

/** One bad field of a validation failure (`details.fields`); definition problems name their node. */
export interface FieldProblem {
  field: string;
  reason: string;
  nodeId?: string;
}

export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
  limit: number;
}

export type Role = 'viewer' | 'editor' | 'owner';

export interface Me {
  id: string;
  name: string;
  isAdmin?: boolean;
}

export interface Collection {
  id: string;
  name: string;
  role: Role;
  createdAt: string;
  updatedAt: string;
}

export const FILE_STATUSES = ['pending', 'processing', 'indexed', 'error'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

export interface FileItem {
  id: string;
  name: string;
  type: string;
  size: number;
  status: FileStatus;
  createdAt: string;
  error?: string;
}

export interface Passage {
  id: string;
  content: string;
  distance: number;
  fileId: string;
  fileName: string;
  chunkIndex: number;
  page?: number;
}

export type ParameterMode = 'fixed' | 'expression' | 'ai';

export interface NodeSpec {
  id: string;
  name?: string;
  type: string;
  version?: number;
  parameters?: Record<string, unknown>;
  parameterMode?: Record<string, ParameterMode>;
  runMode?: 'input' | 'item';
  continueOnError?: boolean;
  retry?: { maxAttempts: number; backoffMs?: number };
  timeoutMs?: number;
  position?: { x: number; y: number };
}

export interface Edge {
  from: string;
  to: string;
  output?: string;
}

export interface Definition {
  nodes: NodeSpec[];
  edges?: Edge[];
  variables?: { name: string; type: string; value?: unknown }[];
}

export interface Workflow {
  id: string;
  name: string;
  role: Role;
  activeVersion: number | null;
  latestVersion: number | null;
  webhookPath: string;
  definition: Definition;
  createdAt: string;
  updatedAt: string;
}

export type WorkflowSummary = Omit<Workflow, 'definition'> & { nodeCount: number };

export interface Version {
  id: string;
  version: number;
  active: boolean;
  createdBy: string;
  createdAt: string;
  definition?: Definition;
}

export type JsonSchema = Record<string, any>;

export interface NodeType {
  type: string;
  version: number;
  displayName: string;
  description: string;
  trigger: boolean;
  defaultRunMode: 'input' | 'item';
  parameters: JsonSchema;
}

export interface NodeTypes {
  items: NodeType[];
  parameterModes: ParameterMode[];
}

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL: readonly string[] = ['succeeded', 'failed', 'canceled'];

export interface StepError {
  code: string;
  message: string;
  details?: unknown;
}

export interface Step {
  nodeId: string;
  type: string;
  version: number;
  status: 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped' | 'canceled';
  attempts: number;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  input?: unknown;
  output?: unknown;
  error: StepError | null;
  iterations?: number;
  reused?: boolean;
}

export interface RunSummary {
  id: string;
  workflowId: string;
  runType: 'test' | 'production';
  version: number | null;
  status: RunStatus;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  cancelRequested: boolean;
  error: (StepError & { nodeId?: string }) | null;
  retryOf: string | null;
  parentRunId: string | null;
}

export interface Run extends RunSummary {
  input: unknown;
  output: unknown;
  steps: Step[];
}

export interface Accepted {
  runId: string;
  workflowId: string;
  runType: string;
  status: string;
}

export interface OptionItem {
  value: string;
  label: string;
  description?: string;
}
