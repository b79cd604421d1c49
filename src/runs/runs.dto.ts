import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { AppError } from '../common/app-error';
import { Field, validateInput } from '../common/input-validation';
import { PageQueryDto } from '../common/pagination';
import { RUN_STATUSES, RUN_TYPES, RunStatus, RunType } from '../domain/run.model';
import { NODE_ID } from '../domain/workflow-definition.model';

/** The request bodies and queries of the runs API: start (the webhook), test a node, retry, list. */

export class RunsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only runs of this workflow' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  workflowId?: string;

  @ApiPropertyOptional({ enum: RUN_STATUSES })
  @IsOptional()
  @IsIn(RUN_STATUSES)
  status?: RunStatus;
}

/** `?wait=` holds the webhook call this long at the most. */
export const MAX_WAIT_SECONDS = 30;

export class StartRunQueryDto {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_WAIT_SECONDS,
    description:
      'Wait up to this many seconds for the run to finish: 200 with the run record, or 202 with the status the run has then when time runs out',
  })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value))
  @IsInt({ message: 'wait must be a whole number of seconds' })
  @Min(1)
  @Max(MAX_WAIT_SECONDS)
  wait?: number;
}

export class RetryRunDto {
  @ApiPropertyOptional({
    enum: ['start', 'failed'],
    default: 'start',
    description: '`failed`: reuse the outputs of the nodes that had finished and start at the failed one',
  })
  @IsOptional()
  @IsIn(['start', 'failed'])
  from: 'start' | 'failed' = 'start';
}

/** The webhook body, validated by `parseStartRun` (not by the pipe: see there). */
export class StartRunDto {
  @Field({ description: '`production` runs the active published version; `test` runs the draft' })
  @IsIn(RUN_TYPES)
  runType: RunType = 'production';

  @Field({ description: 'Any JSON value; the webhook trigger outputs it unchanged' })
  @IsOptional()
  input?: unknown;
}

/**
 * The webhook body checked by StartRunDto, with `input` handed on exactly as it was sent: the
 * validation pipe would delete keys such as `constructor` inside it and class-transformer rebuild
 * it, so only the rest of the body goes through them. No body at all is an empty one.
 * @throws AppError VALIDATION_FAILED
 */
export function parseStartRun(body: unknown): { runType: RunType; input: unknown } {
  if (body === undefined || body === null) return { runType: 'production', input: undefined };
  if (typeof body !== 'object' || Array.isArray(body)) throw AppError.validation([{ field: 'body', reason: 'must be a JSON object' }]);
  const { input, ...rest } = body as Record<string, unknown>;
  return { runType: validateInput(StartRunDto, rest).runType, input };
}

/** A test of one node, validated by `parseNodeTest` (as the webhook's body: `input` is handed on untouched). */
export class NodeTestDto {
  @Field({ description: 'The node to run, an id of the draft (not inside a loop body: test the loop)' })
  @IsString()
  @Matches(NODE_ID, { message: 'nodeId must be a node id' })
  nodeId: string;

  @Field({
    description: "The node's input: any JSON value. Left out: the data pinned on the node in the draft, else its input in run fromRunId",
  })
  @IsOptional()
  input?: unknown;

  @Field({ description: "A run of this workflow whose record holds the node's input, used when no input is given or pinned" })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  fromRunId?: string;

  @Field({ description: 'Run what follows the node too (default: the node alone)' })
  @IsOptional()
  @IsBoolean()
  andAfter: boolean = false;
}

/** @throws AppError VALIDATION_FAILED */
export function parseNodeTest(body: unknown): {
  nodeId: string;
  input?: unknown;
  hasInput: boolean;
  fromRunId?: string;
  andAfter: boolean;
} {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw AppError.validation([{ field: 'body', reason: 'must be a JSON object' }]);
  const { input, ...rest } = body as Record<string, unknown>;
  const checked = validateInput(NodeTestDto, rest);
  return {
    nodeId: checked.nodeId,
    andAfter: checked.andAfter,
    ...(checked.fromRunId ? { fromRunId: checked.fromRunId } : {}),
    hasInput: 'input' in body,
    input,
  };
}
