import { IsIn, IsISO8601, IsNumber, IsOptional, Max, Min } from 'class-validator';
import { Parameter } from '../../src/sdk';

export const WAIT_UNITS = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;
export type WaitUnit = keyof typeof WAIT_UNITS;
/** A run waits a year at the most. */
export const MAX_WAIT_MS = 366 * WAIT_UNITS.days;

export class WaitParameters {
  @Parameter({ displayName: 'Amount', description: 'How long to wait, in `unit`s (ignored when `until` is given).' })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MAX_WAIT_MS / 1000)
  amount: number = 1;

  @Parameter({ displayName: 'Unit', description: 'Unit of `amount`.' })
  @IsIn(Object.keys(WAIT_UNITS))
  unit: WaitUnit = 'minutes';

  @Parameter({
    displayName: 'Until',
    description: 'Wait until this moment instead (ISO 8601, e.g. 2026-12-24T18:00:00Z; as an expression, e.g. `input.remindAt`). A moment in the past does not wait.',
    schema: { format: 'date-time' },
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;
}
