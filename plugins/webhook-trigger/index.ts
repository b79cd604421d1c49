import { defineNode } from 'workflow-collection-service/sdk';

/** Configured by adding it to a workflow: the webhook URL is the workflow's own. */
export class WebhookTriggerParameters {}

export default defineNode({
  type: 'webhook-trigger',
  version: 1,
  displayName: 'Webhook Trigger',
  description: 'Starts a run when POST /api/v1/workflows/<id>/runs is called; outputs the request body\'s "input" unchanged.',
  parameters: WebhookTriggerParameters,
  defaultRunMode: 'input',
  trigger: true,
  execute: (ctx) => (ctx.runMode === 'input' ? ctx.input : ctx.item),
});
