import { defineNode, toOutput } from 'workflow-collection-service/sdk';
import { SwitchParameters } from './switch.parameters';

export { SwitchParameters };

export const FALLBACK = 'fallback';

/** The case `value` names (by name, or by index), else the fallback. */
export function caseOf(cases: readonly string[], value: unknown): string {
  if (typeof value === 'string' && cases.includes(value)) return value;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < cases.length) return cases[value];
  return FALLBACK;
}

export default defineNode({
  type: 'switch',
  version: 1,
  displayName: 'Switch',
  description:
    'Routes each item to the output of the case its value names (by name or index), or to `fallback` when none matches. The cases are the outputs edges pick.',
  parameters: SwitchParameters,
  defaultRunMode: 'item',
  outputs: (params) => [...(params.cases ?? []), FALLBACK],
  execute: (ctx) => toOutput(caseOf(ctx.params.cases, ctx.params.value), ctx.runMode === 'input' ? ctx.input : ctx.item),
});
