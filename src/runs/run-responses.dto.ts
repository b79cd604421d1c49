import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { anyJson, pageOf, timestamp } from '../common/response-schemas';
import { RUN_STATUSES, RUN_TRIGGERS, RUN_TYPES, RunStatus, RunTrigger, RunType } from '../domain/run.model';
import { STEP_STATUSES, StepStatus } from '../domain/step.model';

/** What the runs endpoints answer, for OpenAPI. */

export class RunAcceptedDto {
  @ApiProperty({ example: 'run_0123456789abcdefghijklmno', description: 'The run id, as in the run record' })
  id: string;

  @ApiProperty({ example: 'run_0123456789abcdefghijklmno', description: 'The same as id (kept for earlier clients)' })
  runId: string;

  @ApiProperty()
  workflowId: string;

  @ApiProperty({ enum: RUN_TYPES })
  runType: RunType;

  @ApiProperty({
    enum: RUN_STATUSES,
    description:
      'queued for a new run; where it stands for a replayed Idempotency-Key, and when a ?wait= ran out of time (queued, running or waiting)',
  })
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
    description: 'How the run started, which says whose rights it acts with (docs/security.md: Whose rights a run uses)',
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
