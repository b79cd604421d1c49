// class-transformer's @Type reads the design types reflect-metadata records: loaded here, the DTOs
// work wherever they are imported (the stdio program, a unit spec), not only under the service's entry.
import 'reflect-metadata';
// Over 400 lines on purpose: the request bodies of the workflows API in one place, each class the
// OpenAPI schema and the validation rule of one body (split by route, they would import each other).
// The bodies of the runs API are in runs/runs.dto.ts.
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  NotEquals,
  ValidateBy,
} from 'class-validator';
import {
  Backoff,
  BACKOFFS,
  ON_ERROR,
  OnError,
  PARAMETER_MODES,
  ParameterMode,
  NODE_ID,
  VARIABLE_NAME,
  VARIABLE_TYPES,
  VariableType,
} from '../domain/workflow-definition.model';
import type { RunMode } from '../sdk';
import { NestedObject, NestedObjects, NoControlCharacters } from '../common/input-validation';
import { STEP_DATA_POLICIES, StepDataPolicy } from '../domain/workflow.model';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export const MAX_NODES = 200;
export const MAX_EDGES = 1000;
export const MAX_VARIABLES = 100;
export const MAX_NOTES = 100;
export const MAX_NOTE_CHARS = 10_000;
export const MAX_RETRY_ATTEMPTS = 10;
export const MAX_BACKOFF_MS = 5 * 60 * 1000;
/** n8n's limits for its node settings of the same names. */
export const MAX_TRIES = 5;
export const MAX_WAIT_BETWEEN_TRIES_MS = 5 * 60 * 1000;
export const MAX_NODE_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** Every value of the object is one of `allowed`. */
function IsRecordOf(allowed: readonly string[]): PropertyDecorator {
  return ValidateBy({
    name: 'isRecordOf',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.values(value).every((v) => allowed.includes(v as string)),
      defaultMessage: (args) => `${args?.property} must map parameter names to one of: ${allowed.join(', ')}`,
    },
  });
}

export class RetryDto {
  @ApiProperty({ minimum: 1, maximum: MAX_RETRY_ATTEMPTS, description: 'Tries including the first; 1 means no retry' })
  @IsInt()
  @Min(1)
  @Max(MAX_RETRY_ATTEMPTS)
  maxAttempts: number;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_BACKOFF_MS, default: 1000, description: 'Wait before the second try; doubles each time' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_BACKOFF_MS)
  backoffMs?: number;
}

export class PositionDto {
  @ApiProperty({ description: 'Where the builder draws the node' })
  @IsNumber()
  x: number;

  @ApiProperty()
  @IsNumber()
  y: number;
}

/** Why `__proto__` names no node and no variable: expressions read them as keys of an object, where it names its prototype. */
const NOT_A_KEY = 'expressions read it as a key of an object (nodes.<id>, variables.<name>), where __proto__ is none';

export class NodeSpecDto {
  @ApiProperty({ pattern: NODE_ID.source, description: 'Unique in the workflow; expressions read its output as nodes.<id>' })
  @IsString()
  @Matches(NODE_ID, { message: 'id must start with a letter or _ and hold at most 64 letters, digits, _ or -' })
  @NotEquals('__proto__', { message: `id must not be __proto__: ${NOT_A_KEY}` })
  id: string;

  @ApiPropertyOptional({ description: 'Label shown in the builder' })
  @IsOptional()
  @IsString()
  @Length(0, 200)
  name?: string;

  @ApiProperty({ example: 'http-request', description: 'A node type from GET /api/v1/node-types' })
  @IsString()
  @Length(1, 100)
  type: string;

  @ApiPropertyOptional({ minimum: 1, description: 'Node type version; the newest loaded one when omitted (and then stored)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  version?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    default: {},
    description: 'Parameter values; expressions as strings; in ai mode an optional hint for the model',
  })
  @IsOptional()
  @IsObject()
  parameters?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', enum: [...PARAMETER_MODES] },
    example: { url: 'expression', offset: 'ai' },
    description:
      'Mode of each parameter: fixed (the default), expression, or ai (AI Decide: the configured language model chooses the value)',
  })
  @IsOptional()
  @IsRecordOf(PARAMETER_MODES)
  parameterMode?: Record<string, ParameterMode>;

  @ApiPropertyOptional({ enum: ['input', 'item'], description: "Defaults to the node type's run mode" })
  @IsOptional()
  @IsIn(['input', 'item'])
  runMode?: RunMode;

  @ApiPropertyOptional({
    enum: [...ON_ERROR],
    default: 'stop',
    description:
      'On failure: stop (the nodes after it are skipped and the run fails), continue (the error becomes its output and the next nodes run), or errorOutput (the failed items, each with its error, go to an added output named "error", which edges take with output "error"; the others go on as usual)',
  })
  @IsOptional()
  @IsIn(ON_ERROR)
  onError?: OnError;

  @ApiPropertyOptional({
    description: 'The older spelling of onError: true is "continue", false is "stop"; given with onError, they must agree',
  })
  @IsOptional()
  @IsBoolean()
  continueOnError?: boolean;

  @ApiPropertyOptional({
    default: false,
    description:
      'Try the node again after a failure that may pass (no answer, a timeout, an upstream 408, 425, 429 or 5xx, an unexpected error); a configuration error is never tried again',
  })
  @IsOptional()
  @IsBoolean()
  retryOnFail?: boolean;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_TRIES,
    default: 3,
    description: 'Tries in all, the first included, when retryOnFail is on',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TRIES)
  maxTries?: number;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: MAX_WAIT_BETWEEN_TRIES_MS,
    default: 1000,
    description: 'Wait before the second try, in ms, when retryOnFail is on',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_WAIT_BETWEEN_TRIES_MS)
  waitBetweenTries?: number;

  @ApiPropertyOptional({
    enum: [...BACKOFFS],
    default: 'fixed',
    description: 'fixed: the same wait before every try; exponential: the wait doubles for each further try (5 minutes at most)',
  })
  @IsOptional()
  @IsIn(BACKOFFS)
  backoff?: Backoff;

  @ApiPropertyOptional({
    type: RetryDto,
    description:
      'The older spelling of retryOnFail with maxTries, waitBetweenTries and exponential backoff; given with them, they must agree',
  })
  @IsOptional()
  @NestedObject(() => RetryDto)
  retry?: RetryDto;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_NODE_TIMEOUT_MS, description: 'Limit of one try, in ms' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_NODE_TIMEOUT_MS)
  timeoutMs?: number;

  @ApiPropertyOptional({
    default: false,
    description:
      'Turned off without being removed: the node does not run and its input goes on unchanged from its first output (its step is recorded as skipped); a trigger or a loop cannot be disabled',
  })
  @IsOptional()
  @IsBoolean()
  disabled?: boolean;

  @ApiPropertyOptional({ type: PositionDto })
  @IsOptional()
  @NestedObject(() => PositionDto)
  position?: PositionDto;
}

export class StickyNoteDto {
  @ApiProperty({ pattern: NODE_ID.source, description: 'Unique among the notes' })
  @IsString()
  @Matches(NODE_ID, { message: 'id must start with a letter or _ and hold at most 64 letters, digits, _ or -' })
  id: string;

  @ApiProperty({ maxLength: MAX_NOTE_CHARS, description: 'What the note says (plain text)' })
  @IsString()
  @Length(0, MAX_NOTE_CHARS)
  text: string;

  @ApiProperty({ type: PositionDto, description: 'Its top left corner on the canvas' })
  @IsDefined()
  @NestedObject(() => PositionDto)
  position: PositionDto;

  @ApiProperty({ minimum: 80, maximum: 2000, description: 'Width on the canvas' })
  @IsInt()
  @Min(80)
  @Max(2000)
  width: number;

  @ApiProperty({ minimum: 40, maximum: 2000, description: 'Height on the canvas' })
  @IsInt()
  @Min(40)
  @Max(2000)
  height: number;
}

export class EdgeDto {
  @ApiProperty({ description: 'Id of the node whose output is passed on' })
  @IsString()
  from: string;

  @ApiProperty({ description: 'Id of the node receiving it as input' })
  @IsString()
  to: string;

  @ApiPropertyOptional({
    example: 'true',
    description:
      "Which output of `from` (an IF's true/false, a Switch's cases, a Loop's loop/done, `error` for a node with onError errorOutput); default its first",
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'output must be an output name of the node (letters, digits, _ or -)' })
  output?: string;
}

export class RateLimitDto {
  @ApiProperty({ minimum: 1, maximum: 1_000_000, description: 'Webhook calls accepted per window' })
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  requests: number;

  @ApiProperty({ minimum: 1, maximum: 86_400, description: 'Length of the window, in seconds' })
  @IsInt()
  @Min(1)
  @Max(86_400)
  perSeconds: number;
}

export class StepDataDto {
  @ApiPropertyOptional({
    enum: STEP_DATA_POLICIES,
    default: 'all',
    description: 'Succeeded runs: keep what each node received and produced (all), or only statuses, timings and errors (none)',
  })
  @IsOptional()
  @IsIn(STEP_DATA_POLICIES)
  succeeded?: StepDataPolicy;

  @ApiPropertyOptional({
    enum: STEP_DATA_POLICIES,
    default: 'all',
    description: 'Failed and canceled runs: the same choice; with none, a retry can only start from the start',
  })
  @IsOptional()
  @IsIn(STEP_DATA_POLICIES)
  failed?: StepDataPolicy;
}

export class WorkflowSettingsDto {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: 10_000,
    description: 'Runs of this workflow executing at once across all workers; more wait in the queue',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(10_000)
  maxConcurrentRuns?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 1_000_000,
    description:
      'Queued runs of this workflow beyond which callers get 429 with Retry-After and no run; lowers the service limit (RUNS_MAX_QUEUED_PER_WORKFLOW), never raises it',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxQueuedRuns?: number;

  @ApiPropertyOptional({ type: RateLimitDto, description: 'Webhook calls beyond this are answered 429 with Retry-After' })
  @IsOptional()
  @NestedObject(() => RateLimitDto)
  rateLimit?: RateLimitDto;

  @ApiPropertyOptional({
    description:
      'A workflow (you hold the editor role on) whose published version runs when a production run of this one fails; its input names the workflow, the run and the error',
  })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  errorWorkflowId?: string;

  @ApiPropertyOptional({
    type: StepDataDto,
    description: 'What finished runs keep of their steps; statuses, timings and errors always stay',
  })
  @IsOptional()
  @NestedObject(() => StepDataDto)
  stepData?: StepDataDto;
}

export class VariableDto {
  @ApiProperty({ pattern: VARIABLE_NAME.source, description: 'Read in expressions as variables.<name>' })
  @IsString()
  @Matches(VARIABLE_NAME, { message: 'name must be a JavaScript identifier of at most 64 characters' })
  @NotEquals('__proto__', { message: `name must not be __proto__: ${NOT_A_KEY}` })
  name: string;

  @ApiProperty({ enum: [...VARIABLE_TYPES] })
  @IsIn(VARIABLE_TYPES)
  type: VariableType;

  @ApiPropertyOptional({
    description: 'A value of the type. Secrets are write-only: send null (or leave it out) to keep the stored one.',
    oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
    nullable: true,
  })
  @Allow()
  value?: unknown;

  @ApiPropertyOptional({
    description: 'What GET shows of a secret (it is set); ignored on the way in, so a definition read can be sent back as it is',
  })
  @IsOptional()
  @IsBoolean()
  set?: boolean;
}

export class DefinitionDto {
  @ApiProperty({ type: [NodeSpecDto] })
  @IsArray()
  @ArrayMaxSize(MAX_NODES)
  @NestedObjects(() => NodeSpecDto)
  nodes: NodeSpecDto[];

  @ApiPropertyOptional({ type: [EdgeDto], default: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_EDGES)
  @NestedObjects(() => EdgeDto)
  edges?: EdgeDto[];

  @ApiPropertyOptional({ type: [VariableDto], default: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_VARIABLES)
  @NestedObjects(() => VariableDto)
  variables?: VariableDto[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Inputs pinned on nodes of the draft, by node id, for POST .../node-tests; kept with the draft only (publishing leaves them out)',
  })
  @IsOptional()
  @IsObject()
  pinnedData?: Record<string, unknown>;

  @ApiPropertyOptional({ type: [StickyNoteDto], default: [], description: 'Sticky notes on the canvas: they never run' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_NOTES)
  @NestedObjects(() => StickyNoteDto)
  notes?: StickyNoteDto[];
}

export class CreateWorkflowDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @Transform(trim)
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name: string;

  @ApiPropertyOptional({ type: DefinitionDto, description: 'Defaults to a lone webhook trigger' })
  @IsOptional()
  @NestedObject(() => DefinitionDto)
  definition?: DefinitionDto;

  @ApiPropertyOptional({ type: WorkflowSettingsDto, description: 'Not versioned: applies to every run from now on' })
  @IsOptional()
  @NestedObject(() => WorkflowSettingsDto)
  settings?: WorkflowSettingsDto;
}

export class UpdateWorkflowDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, 200)
  @NoControlCharacters()
  name?: string;

  @ApiProperty({ type: DefinitionDto, description: 'Replaces the draft' })
  @IsDefined()
  @NestedObject(() => DefinitionDto)
  definition: DefinitionDto;

  @ApiPropertyOptional({ type: WorkflowSettingsDto, description: 'Replaces the settings when given; left out, they stay' })
  @IsOptional()
  @NestedObject(() => WorkflowSettingsDto)
  settings?: WorkflowSettingsDto;
}
