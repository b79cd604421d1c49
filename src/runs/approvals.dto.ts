import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { listOf, timestamp } from '../common/response-schemas';
import { Decision, DECISIONS } from './approvals.service';

export const MAX_COMMENT_CHARS = 4000;

/** A decision on an approval node, by REST or the console's inbox. */
export class DecideApprovalDto {
  @ApiProperty({ enum: DECISIONS, description: "The run goes on through the node's output of this name" })
  @IsIn(DECISIONS)
  decision: Decision;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: "What the approver fills in, checked against the node's `fields` JSON Schema",
  })
  @IsOptional()
  @IsObject()
  fields?: Record<string, unknown>;

  @ApiPropertyOptional({ maxLength: MAX_COMMENT_CHARS, description: "A note kept with the decision (in the node's output)" })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_COMMENT_CHARS)
  comment?: string;
}

export class PendingApprovalDto {
  @ApiProperty()
  runId: string;

  @ApiProperty()
  workflowId: string;

  @ApiProperty({ type: 'string', nullable: true })
  workflowName: string | null;

  @ApiProperty({ description: 'The approval node' })
  nodeId: string;

  @ApiProperty({ description: 'What the approver is asked to decide' })
  summary: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'JSON Schema of the fields the approver fills in; null when none',
  })
  fields: Record<string, unknown> | null;

  @ApiProperty(timestamp('When the run started waiting', true))
  createdAt: string | null;

  @ApiProperty(timestamp('When the wait ends without a decision (the timedOut output)'))
  expiresAt: string;

  @ApiProperty({ description: 'The signed one-time link to the approval page (editors see it here; it is never in the run record)' })
  approvalUrl: string;
}

export const PendingApprovalListDto = listOf(PendingApprovalDto, 'PendingApprovalList');

export class DecidedByDto {
  @ApiProperty({ enum: ['user', 'link'], description: '`user`: through REST or the console; `link`: whoever held the signed link' })
  type: 'user' | 'link';

  @ApiPropertyOptional()
  userId?: string;

  @ApiPropertyOptional({ type: 'string', nullable: true })
  name?: string | null;

  @ApiPropertyOptional({ type: 'string', nullable: true })
  email?: string | null;
}

export class ApprovalDecisionDto {
  @ApiProperty()
  runId: string;

  @ApiProperty()
  nodeId: string;

  @ApiProperty({ enum: DECISIONS })
  decision: Decision;

  @ApiProperty({ type: DecidedByDto })
  decidedBy: DecidedByDto;

  @ApiProperty(timestamp())
  decidedAt: string;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  fields: Record<string, unknown> | null;

  @ApiProperty({ type: 'string', nullable: true })
  comment: string | null;
}
