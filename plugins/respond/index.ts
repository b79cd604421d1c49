import { defineNode } from 'workflow-collection-service/sdk';

/** Nothing to set: what reaches the node is the answer. */
export class RespondParameters {}

export default defineNode({
  type: 'respond',
  version: 1,
  displayName: 'Respond',
  description:
    "Makes its input the workflow's answer to whoever waits for the run (an MCP tool call, a parent workflow, ?wait=), whatever runs after it. Outputs its input unchanged.",
  parameters: RespondParameters,
  defaultRunMode: 'input',
  respond: true,
  execute: (ctx) => (ctx.runMode === 'input' ? ctx.input : ctx.item),
});
