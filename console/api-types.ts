/**
 * The REST API's shapes as the console reads them: names for the types generated from the
 * server's OpenAPI document (api-types.generated.ts, `npm run api-types`), so a server change the
 * console does not follow fails the typecheck instead of the browser. Only what the document
 * cannot say is written here, each with its reason.
 */
import type { components } from './api-types.generated';

type Schemas = components['schemas'];

/**
 * One bad field of a validation failure (`details.fields`). Definition problems also name their
 * node and, for an expression's syntax error, where in it: the document describes only the two
 * fields every refusal has.
 */
export type FieldProblem = Schemas['FieldErrorDto'] & { nodeId?: string; line?: number; column?: number };

export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
  limit: number;
}

export type Role = Schemas['CollectionDto']['role'];
export type Me = Schemas['MeDto'];
export type Collection = Schemas['CollectionDto'];
export type CollectionStats = Schemas['CollectionStatsDto'];
export type FileItem = Schemas['FileDto'];
export type FileStatus = FileItem['status'];
export const FILE_STATUSES: readonly FileStatus[] = ['pending', 'processing', 'indexed', 'error'];
export type Passage = Schemas['SearchHitDto'];

export type ParameterMode = NonNullable<Schemas['NodeSpecDto']['parameterMode']>[string];
export type NodeSpec = Schemas['NodeSpecDto'];
export type Edge = Schemas['EdgeDto'];
export type Position = Schemas['PositionDto'];
/** A definition as the editor sends it back: secrets' values may be left out (kept by the server). */
export interface Definition {
  nodes: NodeSpec[];
  edges?: Edge[];
  variables?: Schemas['VariableDto'][];
  /** Inputs pinned on nodes for node tests, by node id: saved with the draft only, never published. */
  pinnedData?: Record<string, unknown>;
  /** Sticky notes on the canvas: they never run. */
  notes?: StickyNote[];
}
export type StickyNote = Schemas['StickyNoteDto'];
export type DefinitionView = Schemas['DefinitionViewDto'];
export type Workflow = Schemas['WorkflowDto'];
export type WorkflowSummary = Schemas['WorkflowListItemDto'];
export type Version = Schemas['WorkflowVersionSummaryDto'] & { definition?: DefinitionView };

/** A JSON Schema as the node types carry it (their parameters). */
export type JsonSchema = Record<string, any>;
export type NodeType = Omit<Schemas['NodeTypeDto'], 'parameters'> & { parameters: JsonSchema };
export type NodeTypes = Omit<Schemas['NodeTypeListDto'], 'items'> & { items: NodeType[] };
export type OptionItem = Schemas['ParameterOptionDto'];

export type RunStatus = Schemas['RunSummaryDto']['status'];
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'];
export const TERMINAL: readonly string[] = ['succeeded', 'failed', 'canceled'];
export type StepError = Schemas['RunErrorDto'];
export type StepStatus = Schemas['StepDto']['status'];

/** How a run started, which also says whose rights it acted with (docs/security.md: Whose rights a run uses). */
export type RunTrigger = Schemas['RunSummaryDto']['trigger'];
export const RUN_TRIGGERS: readonly RunTrigger[] = [
  'webhook',
  'console',
  'schedule',
  'mcp',
  'retry',
  'error-workflow',
  'sub-workflow',
  'node-test',
  'chat',
];

/** Inputs and outputs are any JSON: read as unknown, not as the document's union of shapes. */
export type Step = Omit<Schemas['StepDto'], 'input' | 'output'> & { input?: unknown; output?: unknown };
export type RunSummary = Schemas['RunSummaryDto'];
export type Run = Omit<Schemas['RunDto'], 'input' | 'output' | 'steps'> & { input: unknown; output: unknown; steps: Step[] };
export type Accepted = Schemas['RunAcceptedDto'];

/** An approval node waiting for a decision (the inbox); its `fields` is a JSON Schema, read as one. */
export type PendingApproval = Omit<Schemas['PendingApprovalDto'], 'fields'> & { fields: JsonSchema | null };
export type ApprovalDecision = Schemas['ApprovalDecisionDto'];
/** One model or tool call inside a node (an AI agent's loop), as a step's `subSteps` carries it. */
export type SubStep = Schemas['SubStepDto'];

export type NodeTest = Schemas['NodeTestDto'];
export type Credential = Schemas['CredentialDto'];
export type CredentialType = Credential['type'];
export const CREDENTIAL_TYPES: readonly CredentialType[] = ['bearer', 'basic', 'header', 'query', 'oauth2-client-credentials'];
export type CredentialUsage = Schemas['CredentialUsageDto'];
export type Member = Schemas['MemberDto'];
export type WorkflowSettings = NonNullable<Schemas['WorkflowDto']['settings']>;
export type Variable = Schemas['VariableDto'];
export type ApiKey = Schemas['ApiKeyDto'];
export type IssuedApiKey = Schemas['IssuedApiKeyDto'];
export type User = Schemas['UserDto'];
export type CreatedUser = Schemas['CreatedUserDto'];
export type OnError = NonNullable<NodeSpec['onError']>;
export type Backoff = NonNullable<NodeSpec['backoff']>;
