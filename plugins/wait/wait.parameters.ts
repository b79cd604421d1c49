import { IsIn, IsISO8601, IsNumber, IsOptional, Max, Min } from 'class-validator';
import { DURATION_UNITS, DurationUnit, MAX_PAUSE_MS, Parameter } from 'workflow-collection-service/sdk';

export class WaitParameters {
  @Parameter({ displayName: 'Amount', description: 'How long to wait, in `unit`s (ignored when `until` is given).' })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MAX_PAUSE_MS / 1000)
  amount: number = 1;

  @Parameter({ displayName: 'Unit', description: 'Unit of `amount`.' })
  @IsIn(Object.keys(DURATION_UNITS))
  unit: DurationUnit = 'minutes';

  @Parameter({
    displayName: 'Until',
    description:
      'Wait until this moment instead (ISO 8601, e.g. 2026-12-24T18:00:00Z; as an expression, e.g. `input.remindAt`). A moment in the past does not wait.',
    schema: { format: 'date-time' },
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;
}
