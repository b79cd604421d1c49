import { defineNode } from 'workflow-collection-service/sdk';
import { McpTriggerParameters } from './mcp-trigger.parameters';

export { McpTriggerParameters };

export default defineNode({
  type: 'mcp-trigger',
  version: 1,
  displayName: 'MCP Trigger',
  description:
    "Offers the published workflow as a tool of the service's MCP server, to users with at least the viewer role on it. A call runs the active version with the tool's arguments as input and answers with the run's output: that of its Respond node, else of its end node (with several end nodes, their outputs keyed by node id). Outputs the arguments.",
  parameters: McpTriggerParameters,
  defaultRunMode: 'input',
  trigger: {
    tool: (params) => ({
      ...(params.toolName ? { name: params.toolName } : {}),
      ...(params.description ? { description: params.description } : {}),
      inputSchema: params.inputSchema,
    }),
  },
  execute: (ctx) => (ctx.runMode === 'input' ? ctx.input : ctx.item),
});
