import { defineNode } from 'workflow-collection-service/sdk';
import { CodeParameters } from './code.parameters';

export { CodeParameters };

export default defineNode({
  type: 'code',
  version: 1,
  displayName: 'Code',
  description:
    'Runs JavaScript in an isolated sandbox outside the service process, with the limits of expressions, and outputs what it returns, which must be JSON. Input in, JSON out: it reaches nothing outside (no require, process, timers or network).',
  parameters: CodeParameters,
  defaultRunMode: 'input',
  execute(ctx) {
    const scope =
      ctx.runMode === 'input'
        ? { input: ctx.input ?? null, variables: ctx.variables, nodes: ctx.nodes }
        : { item: ctx.item ?? null, itemIndex: ctx.itemIndex, variables: ctx.variables, nodes: ctx.nodes };
    return ctx.sandbox.run(ctx.params.code, scope, ctx.signal, { nodeId: ctx.nodeId });
  },
});
