import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import scheduleTrigger, { ScheduleTriggerParameters } from './index';

const errorsOf = (values: object) => validateSync(plainToInstance(ScheduleTriggerParameters, values)).map((e) => e.property);

describe('schedule-trigger node', () => {
  it('declares its schedule from the parameters', () => {
    const trigger = scheduleTrigger.trigger;
    if (typeof trigger !== 'object' || !trigger.schedule) throw new Error('expected a schedule trigger');
    expect(trigger.schedule(Object.assign(new ScheduleTriggerParameters(), { cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }))).toEqual({
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
    });
  });

  it('outputs the tick it was started for', () => {
    const tick = { scheduledAt: '2026-11-24T09:00:00.000Z', firedAt: '2026-11-24T09:00:00.120Z' };
    expect(scheduleTrigger.execute(inputContext(new ScheduleTriggerParameters(), { input: tick }))).toEqual(tick);
  });

  it('accepts 5- and 6-field cron expressions in an IANA time zone', () => {
    expect(errorsOf({ cron: '*/15 * * * *' })).toEqual([]);
    expect(errorsOf({ cron: '0 */5 * * * *', timezone: 'America/New_York' })).toEqual([]);
  });

  it('refuses a malformed cron expression and an unknown time zone', () => {
    expect(errorsOf({ cron: 'every day' })).toEqual(['cron']);
    expect(errorsOf({ cron: '61 * * * *' })).toEqual(['cron']);
    expect(errorsOf({ cron: '0 9 * * *', timezone: 'Mars/Olympus' })).toEqual(['timezone']);
  });
});
