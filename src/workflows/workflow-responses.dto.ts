import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { anyJson, listOf, pageOf, timestamp } from '../common/response-schemas';
import { ROLES, Role } from '../domain/membership.model';
import { RUN_STATUSES, RunStatus } from '../domain/run.model';
import { VARIABLE_TYPES, VariableType } from '../domain/workflow-definition.model';
import { EdgeDto, NodeSpecDto, StickyNoteDto, WorkflowSettingsDto } from './workflows.dto';
import { RunErrorDto } from '../runs/run-responses.dto';

/** What the workflow, node-type and workflow-tool endpoints answer, for OpenAPI (the runs' answers: runs/run-responses.dto.ts). */

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

  @ApiPropertyOptional({ type: [StickyNoteDto], description: 'Sticky notes on the canvas, when there are any' })
  notes?: StickyNoteDto[];
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

export class ToolRunProgressDto {
  @ApiProperty({ type: 'integer', description: 'Steps that finished' })
  done: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'The node running or waiting now' })
  node: string | null;
}

export class ToolRunApprovalDto {
  @ApiProperty({ description: 'The approval node the run waits at' })
  nodeId: string;

  @ApiProperty()
  summary: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'JSON Schema of the fields the approver fills in',
  })
  fields: Record<string, unknown> | null;

  @ApiProperty(timestamp('When the wait ends without a decision'))
  expiresAt: string;

  @ApiProperty({ description: 'Whether the caller may decide it (the editor role on the workflow)' })
  mayDecide: boolean;

  @ApiPropertyOptional({ description: 'The signed one-time link to the approval page, for a caller who may decide' })
  approvalUrl?: string;
}

export class ToolRunDto {
  @ApiProperty()
  runId: string;

  @ApiProperty()
  workflowId: string;

  @ApiProperty({ enum: RUN_STATUSES })
  status: RunStatus;

  @ApiProperty({ description: 'A cancel was asked for: a running run stops at its next step' })
  cancelRequested: boolean;

  @ApiProperty(timestamp())
  createdAt: string;

  @ApiProperty(timestamp('When anything last happened to the run'))
  updatedAt: string;

  @ApiProperty(anyJson("The run's output once it succeeded, else null"))
  output: unknown;

  @ApiProperty({ type: RunErrorDto, nullable: true })
  error: RunErrorDto | null;

  @ApiProperty({ type: ToolRunProgressDto })
  progress: ToolRunProgressDto;

  @ApiProperty({ type: ToolRunApprovalDto, nullable: true, description: 'The approval the run waits at now' })
  approval: ToolRunApprovalDto | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'How long the run is kept once it ended (ms); null when runs are kept for good',
  })
  keptForMs: number | null;
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
