import {
  IsIn,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
} from 'class-validator';
import {
  CREDENTIAL_ID,
  credentialIdMessage,
  DURATION_UNITS,
  DurationUnit,
  jsonSchemaRule,
  MAX_PAUSE_MS,
  Parameter,
} from 'workflow-collection-service/sdk';

export class ApprovalParameters {
  @Parameter({
    displayName: 'Summary',
    description:
      'What the approver is asked to decide, shown on the approval page and in the inbox (plain text; as an expression, e.g. `Send ${input.amount} EUR to ${input.to}?`).',
    schema: { examples: ['Send the answer to the customer?'] },
  })
  @IsString()
  @MinLength(1)
  @MaxLength(10_000)
  summary: string = 'Approve?';

  @Parameter({
    displayName: 'Fields',
    description:
      'Optional JSON Schema of an object the approver fills in with the decision (e.g. a corrected amount or a reason): the page shows a form for its properties, and a decision whose fields do not match is refused naming the field.',
    schema: { examples: [{ type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] }] },
  })
  @IsOptional()
  @IsObject()
  @ValidateBy(jsonSchemaRule('fields', { object: true }))
  fields?: Record<string, unknown>;

  @Parameter({
    displayName: 'Timeout',
    description: 'How long to wait for a decision, in `timeoutUnit`s; then the run goes on through the `timedOut` output.',
  })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MAX_PAUSE_MS / 1000)
  timeout: number = 1;

  @Parameter({ displayName: 'Timeout unit', description: 'Unit of `timeout`.' })
  @IsIn(Object.keys(DURATION_UNITS))
  timeoutUnit: DurationUnit = 'days';

  @Parameter({
    displayName: 'Notify URL',
    description:
      'Optional: the approval request (summary, approvalUrl, expiresAt, runId, nodeId) is POSTed as JSON to this URL when the run starts waiting, e.g. a chat or mail webhook that forwards the link to the approver.',
  })
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  notifyUrl?: string;

  @Parameter({
    displayName: 'Notify credential',
    description: "Credential injected into the notify request (e.g. the chat webhook's token).",
    credential: true,
  })
  @IsOptional()
  @IsString()
  @Matches(CREDENTIAL_ID, { message: credentialIdMessage })
  notifyCredential?: string;
}
