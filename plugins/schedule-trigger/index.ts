import { defineNode } from 'workflow-collection-service/sdk';
import { ScheduleTriggerParameters } from './schedule-trigger.parameters';

export { ScheduleTriggerParameters };

export default defineNode({
  type: 'schedule-trigger',
  version: 1,
  displayName: 'Schedule Trigger',
  description:
    'Starts a production run of the published workflow at every tick of a cron expression, once per tick however many processes run, acting as the user who published or activated that version. Outputs {scheduledAt, firedAt}; a run started through the webhook outputs its input instead.',
  parameters: ScheduleTriggerParameters,
  defaultRunMode: 'input',
  trigger: { schedule: (params) => ({ cron: params.cron, timezone: params.timezone }) },
  execute: (ctx) => (ctx.runMode === 'input' ? ctx.input : ctx.item),
});
