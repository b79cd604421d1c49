import { CronExpressionParser } from 'cron-parser';
import { IsString, Validate, ValidatorConstraint, ValidatorConstraintInterface } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

@ValidatorConstraint({ name: 'isCron' })
class IsCron implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string' || !/^\s*\S+(\s+\S+){4,5}\s*$/.test(value)) return false;
    try {
      CronExpressionParser.parse(value);
      return true;
    } catch {
      return false;
    }
  }
  defaultMessage(): string {
    return 'cron must be a cron expression of 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), e.g. "*/15 * * * *"';
  }
}

@ValidatorConstraint({ name: 'isTimeZone' })
class IsTimeZone implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string' || !value) return false;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: value });
      return true;
    } catch {
      return false;
    }
  }
  defaultMessage(): string {
    return 'timezone must be an IANA time zone name, e.g. "UTC" or "Europe/Paris"';
  }
}

export class ScheduleTriggerParameters {
  @Parameter({
    displayName: 'Cron',
    description: 'When to run: a cron expression, e.g. `0 9 * * 1-5` (9:00 on weekdays) or `*/15 * * * *` (every 15 minutes).',
    schema: { examples: ['0 9 * * 1-5', '*/15 * * * *'] },
  })
  @IsString()
  @Validate(IsCron)
  cron: string;

  @Parameter({ displayName: 'Time zone', description: 'IANA time zone the cron expression is read in, e.g. `Europe/Paris`.' })
  @IsString()
  @Validate(IsTimeZone)
  timezone: string = 'UTC';
}
