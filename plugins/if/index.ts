import { defineNode, toOutput } from 'workflow-collection-service/sdk';
import { IfParameters } from './if.parameters';

export { IfParameters };

export default defineNode({
  type: 'if',
  version: 1,
  displayName: 'IF',
  description:
    'Routes each item (or, in run mode input, the whole input) to its `true` or `false` output by a condition; nodes reachable only through an output that received nothing are skipped.',
  parameters: IfParameters,
  defaultRunMode: 'item',
  outputs: ['true', 'false'],
  execute: (ctx) => toOutput(ctx.params.condition ? 'true' : 'false', ctx.runMode === 'input' ? ctx.input : ctx.item),
});
