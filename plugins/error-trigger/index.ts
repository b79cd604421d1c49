import { defineNode } from 'workflow-collection-service/sdk';

/** Configured by naming its workflow in another workflow's settings.errorWorkflowId. */
export class ErrorTriggerParameters {}

export default defineNode({
  type: 'error-trigger',
  version: 1,
  displayName: 'Error Trigger',
  description:
    "Starts a production run of the published workflow when a production run of a workflow that names it in settings.errorWorkflowId fails, acting as the user who published or activated this workflow's version. Outputs {workflow: {id, name}, run: {id, runType, trigger, startedAt, finishedAt}, error: {code, message, nodeId?}}; a run started through the webhook outputs its input instead.",
  parameters: ErrorTriggerParameters,
  defaultRunMode: 'input',
  trigger: true,
  execute: (ctx) => (ctx.runMode === 'input' ? ctx.input : ctx.item),
});
