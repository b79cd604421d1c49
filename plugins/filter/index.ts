import { defineNode, toOutput } from 'workflow-collection-service/sdk';
import { FilterParameters } from './filter.parameters';

export { FilterParameters };

export default defineNode({
  type: 'filter',
  version: 1,
  displayName: 'Filter',
  description:
    'Keeps the items whose condition holds: they go to `kept` (the array of them), the others to `discarded`. When no item is kept, the nodes after `kept` are skipped.',
  parameters: FilterParameters,
  defaultRunMode: 'item',
  outputs: ['kept', 'discarded'],
  execute: (ctx) => toOutput(ctx.params.condition ? 'kept' : 'discarded', ctx.runMode === 'input' ? ctx.input : ctx.item),
});
