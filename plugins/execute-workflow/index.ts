import { defineNode, NodeUpstreamError } from 'workflow-collection-service/sdk';
import { ExecuteWorkflowParameters } from './execute-workflow.parameters';

export { ExecuteWorkflowParameters };

export default defineNode({
  type: 'execute-workflow',
  version: 1,
  displayName: 'Execute Workflow',
  description:
    'Runs another workflow as a child run (linked both ways in the run records), waits for it and outputs its output: that of its Respond node, else of its end node (with several end nodes, their outputs keyed by node id). A child that fails or is canceled fails this node with its error.',
  parameters: ExecuteWorkflowParameters,
  defaultRunMode: 'input',
  // Running it again would start another child run.
  idempotent: false,
  async execute(ctx) {
    const { workflowId, runType } = ctx.params;
    const input = ctx.params.input !== undefined ? ctx.params.input : ctx.runMode === 'input' ? ctx.input : ctx.item;
    const result = await ctx.workflows.execute(workflowId, input, { runType, signal: ctx.signal });
    if (result.status !== 'succeeded') {
      throw new NodeUpstreamError(`Sub-workflow run ${result.runId} ${result.status}: ${result.error?.message ?? 'no reason given'}`, {
        retryable: false,
        details: { runId: result.runId, workflowId, status: result.status, ...(result.error ? { error: result.error } : {}) },
      });
    }
    return result.output ?? null;
  },
});
