import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { anyJson, timestamp } from '../common/response-schemas';
import { RUN_STATUSES, RunStatus } from '../runs/run.model';
import { RunErrorDto } from './workflow-responses.dto';

/** The answers of the tool-runs routes: a run started through a workflow's MCP tool, as its caller follows it. */
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
