import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { anyJson, listOf, pageOf, timestamp } from '../common/response-schemas';
import { ROLES, Role } from '../auth/membership.model';
import { RUN_STATUSES, RUN_TRIGGERS, RUN_TYPES, RunStatus, RunTrigger, RunType } from '../runs/run.model';
import { STEP_STATUSES, StepStatus } from '../engine/step.model';
import { VARIABLE_TYPES, VariableType } from '../engine/workflow-definition.model';
import { EdgeDto, NodeSpecDto, WorkflowSettingsDto } from './workflows.dto';

/** What the workflow, run and workflow-tool endpoints answer, for OpenAPI. */

export class VariableViewDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ enum: VARIABLE_TYPES })
  type: VariableType;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
    nullable: true,
    description: 'The value; always null for a secret, which is never returned',
  })
  value: string | number | boolean | null;

  @ApiPropertyOptional({ description: 'Secrets only: a value is stored' })
  set?: boolean;
}

export class DefinitionViewDto {
  @ApiProperty({ type: [NodeSpecDto] })
  nodes: NodeSpecDto[];

  @ApiProperty({ type: [EdgeDto] })
  edges: EdgeDto[];

  @ApiProperty({ type: [VariableViewDto] })
  variables: VariableViewDto[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Inputs pinned on nodes of the draft, by node id (never on a published version)',
  })
  pinnedData?: Record<string, unknown>;
}

export class ScheduleDto {
  @ApiProperty({ description: 'Cron expression of the schedule trigger', example: '0 * * * *' })
  cron: string;

  @ApiProperty({ description: 'IANA time zone the expression is read in', example: 'UTC' })
  timezone: string;
}

export class WorkflowSummaryDto {
  @ApiProperty({ example: 'wfl_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ enum: ROLES, description: 'Your role on the workflow' })
  role: Role;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The published version production runs execute; null before the first publish',
  })
  activeVersion: number | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'Who put the active version in force (published or activated it): runs the service starts by itself (schedule, error workflow) act as this user',
  })
  activatedBy: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      "Who saved the draft last: a test run of the draft as another workflow's sub-workflow acts as this user (null: saved before this was kept)",
  })
  draftSavedBy: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The newest published version' })
  latestVersion: number | null;

  @ApiProperty({ description: 'The webhook: POST here to start a run', example: '/api/v1/workflows/wfl_0123456789abcdefghijklmno/runs' })
  webhookPath: string;

  @ApiProperty({ type: WorkflowSettingsDto })
  settings: WorkflowSettingsDto;

  @ApiProperty({ type: ScheduleDto, nullable: true, description: 'The schedule of the active version, when its trigger has one' })
  schedule: ScheduleDto | null;

  @ApiProperty(timestamp())
  createdAt: string;

  @ApiProperty(timestamp())
  updatedAt: string;
}

export class WorkflowListItemDto extends WorkflowSummaryDto {
  @ApiProperty({ type: 'integer', description: 'Nodes of the draft' })
  nodeCount: number;
}

export const WorkflowPageDto = pageOf(WorkflowListItemDto, 'WorkflowPageDto');

export class WorkflowDto extends WorkflowSummaryDto {
  @ApiProperty({ type: DefinitionViewDto, description: 'The draft: what test runs execute and the next publish snapshots' })
  definition: DefinitionViewDto;
}

export class WorkflowVersionSummaryDto {
  @ApiProperty({ example: 'wfv_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty({ type: 'integer' })
  version: number;

  @ApiProperty({ description: 'Whether production runs execute this version' })
  active: boolean;

  @ApiProperty({ description: 'The user who published it' })
  createdBy: string;

  @ApiProperty(timestamp())
  createdAt: string;
}

export class WorkflowVersionListDto {
  @ApiProperty({ type: [WorkflowVersionSummaryDto] })
  items: WorkflowVersionSummaryDto[];

  @ApiProperty({ type: 'integer', nullable: true })
  activeVersion: number | null;
}

export class WorkflowVersionDto extends WorkflowVersionSummaryDto {
  @ApiProperty({ type: DefinitionViewDto })
  definition: DefinitionViewDto;
}

export class RunAcceptedDto {
  @ApiProperty({ example: 'run_0123456789abcdefghijklmno', description: 'The run id, as in the run record' })
  id: string;

  @ApiProperty({ example: 'run_0123456789abcdefghijklmno', description: 'The same as id (kept for earlier clients)' })
  runId: string;

  @ApiProperty()
  workflowId: string;

  @ApiProperty({ enum: RUN_TYPES })
  runType: RunType;

  @ApiProperty({ enum: RUN_STATUSES, description: 'queued for a new run; where it stands for a replayed Idempotency-Key' })
  status: RunStatus;
}

export class RunErrorDto {
  @ApiProperty({ description: 'An error code (see ErrorCode)' })
  code: string;

  @ApiProperty()
  message: string;

  @ApiPropertyOptional(anyJson('Code-specific details'))
  details?: unknown;

  @ApiPropertyOptional({ description: 'The node whose failure ended the run, when one did' })
  nodeId?: string;
}

export class SubStepTokensDto {
  @ApiProperty({ type: 'integer' })
  prompt: number;

  @ApiProperty({ type: 'integer' })
  completion: number;
}

export class SubStepDto {
  @ApiProperty({ enum: ['model', 'tool'] })
  kind: 'model' | 'tool';

  @ApiProperty({ description: "The model's name, or the tool's" })
  name: string;

  @ApiProperty(timestamp())
  startedAt: string;

  @ApiProperty({ type: 'integer' })
  durationMs: number;

  @ApiPropertyOptional({ type: SubStepTokensDto })
  tokens?: SubStepTokensDto;

  @ApiPropertyOptional(anyJson("The call's arguments (a model call: the messages it was sent), secrets masked"))
  arguments?: unknown;

  @ApiPropertyOptional(anyJson("The call's result, secrets masked"))
  result?: unknown;

  @ApiPropertyOptional({ description: 'Why the call failed (a tool error is handed back to the model)' })
  error?: string;
}

export class StepDto {
  @ApiProperty()
  nodeId: string;

  @ApiProperty({ description: 'Node type' })
  type: string;

  @ApiProperty({ type: 'integer', description: 'Node type version' })
  version: number;

  @ApiProperty({ enum: STEP_STATUSES })
  status: StepStatus;

  @ApiProperty({ type: 'integer', description: 'Tries of the node; 0 when it never ran' })
  attempts: number;

  @ApiProperty(timestamp(undefined, true))
  startedAt: string | null;

  @ApiProperty(timestamp(undefined, true))
  finishedAt: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  durationMs: number | null;

  @ApiPropertyOptional(anyJson('What the node received (one entry per iteration in a loop body), secrets masked and size-capped'))
  input?: unknown;

  @ApiPropertyOptional(anyJson("The node's output, secrets masked and size-capped"))
  output?: unknown;

  @ApiProperty({ type: RunErrorDto, nullable: true })
  error: RunErrorDto | null;

  @ApiPropertyOptional({ type: 'integer', description: "A node in a loop's body: how many iterations ran it" })
  iterations?: number;

  @ApiPropertyOptional({ description: 'Copied from the run this one retries: the node did not run again' })
  reused?: boolean;

  @ApiPropertyOptional({
    type: [SubStepDto],
    description: "What the node did inside itself, in order: an AI agent's model calls and tool calls",
  })
  subSteps?: SubStepDto[];
}

export class RunSummaryDto {
  @ApiProperty({ example: 'run_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty()
  workflowId: string;

  @ApiProperty({ type: 'string', nullable: true, description: "The workflow's name now; null when the workflow is gone" })
  workflowName: string | null;

  @ApiProperty({ enum: RUN_TYPES })
  runType: RunType;

  @ApiProperty({
    enum: RUN_TRIGGERS,
    description: 'How the run started, which says whose rights it acts with (README: Whose rights a run uses)',
  })
  trigger: RunTrigger;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The published version a production run executes; null for a test run' })
  version: number | null;

  @ApiProperty({ enum: RUN_STATUSES })
  status: RunStatus;

  @ApiProperty({
    description: 'The user whose API key started the run; for a run the service started, the user who put the version in force',
  })
  startedBy: string;

  @ApiProperty({ description: 'The user the run acts as' })
  actingUserId: string;

  @ApiProperty(timestamp())
  createdAt: string;

  @ApiProperty(timestamp(undefined, true))
  startedAt: string | null;

  @ApiProperty(timestamp(undefined, true))
  finishedAt: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  durationMs: number | null;

  @ApiProperty()
  cancelRequested: boolean;

  @ApiProperty({ type: RunErrorDto, nullable: true })
  error: RunErrorDto | null;

  @ApiProperty(timestamp('While waiting: when the run goes on', true))
  resumeAt: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'A sub-workflow run: the run that started it' })
  parentRunId: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'A sub-workflow run: the node that started it' })
  parentNodeId: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'The run this one retries' })
  retryOf: string | null;

  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: { nodeId: { type: 'string' }, andAfter: { type: 'boolean' } },
    required: ['nodeId', 'andAfter'],
    description: 'A test of one node (POST .../node-tests): which, and whether what follows ran too',
  })
  nodeTest: { nodeId: string; andAfter: boolean } | null;
}

export const RunPageDto = pageOf(RunSummaryDto, 'RunPageDto');

/** A run as cancel and `?wait=` answer it: the record with its steps. */
export class RunRecordDto extends RunSummaryDto {
  @ApiProperty({ type: 'string', nullable: true })
  versionId: string | null;

  @ApiProperty(anyJson("The webhook body's input; null when it had none"))
  input: unknown;

  @ApiProperty(
    anyJson(
      "The run's output, masked: its respond node's if one ran, else its end node's (a node that passed nothing on), or with several ends an object of their outputs keyed by node id; null until it succeeded, and for a failed or canceled run",
    ),
  )
  output: unknown;

  @ApiProperty({ type: 'integer', description: 'Times a worker claimed the run' })
  attempts: number;

  @ApiProperty({ type: [StepDto], description: 'One per node, in execution order' })
  steps: StepDto[];
}

/** GET /runs/:id: the record and the sub-workflow runs it started. */
export class RunDto extends RunRecordDto {
  @ApiProperty({ type: [RunSummaryDto], description: 'Sub-workflow runs this run started (the first 100)' })
  children: RunSummaryDto[];
}

export class WorkflowToolDto {
  @ApiProperty({ description: 'The tool name MCP clients call' })
  name: string;

  @ApiProperty()
  title: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: "JSON Schema of the tool's arguments" })
  inputSchema: Record<string, unknown>;

  @ApiProperty()
  workflowId: string;

  @ApiProperty({ description: 'The published version a call runs; a call after another version became active is refused (409)' })
  versionId: string;
}

export const WorkflowToolListDto = listOf(WorkflowToolDto, 'WorkflowToolListDto');

export class WorkflowToolCallDto {
  @ApiProperty()
  runId: string;

  @ApiProperty({ description: 'The run status, or running when the time limit came first' })
  status: string;

  @ApiPropertyOptional(anyJson("The run's output, once it finished"))
  output?: unknown;

  @ApiPropertyOptional({ type: RunErrorDto, nullable: true })
  error?: RunErrorDto | null;
}

export class NodeTypeDto {
  @ApiProperty({ example: 'http-request' })
  type: string;

  @ApiProperty({ type: 'integer' })
  version: number;

  @ApiProperty()
  displayName: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ description: 'Whether the node starts workflows' })
  trigger: boolean;

  @ApiProperty({ enum: ['input', 'item'] })
  defaultRunMode: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the parameters' })
  parameters: Record<string, unknown>;
}

export class NodeTypeListDto {
  @ApiProperty({ type: [NodeTypeDto] })
  items: NodeTypeDto[];

  @ApiProperty({
    type: 'string',
    isArray: true,
    enum: ['fixed', 'expression', 'ai'],
    description: 'The parameter modes on offer; ai only where a language model is configured',
  })
  parameterModes: string[];
}
