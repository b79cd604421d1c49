import { defineNode, toOutput } from 'workflow-collection-service/sdk';
import { LoopParameters } from './loop.parameters';

export { LoopParameters };

/**
 * What the body gave back over the iterations: concatenated when each iteration gave an array (a
 * batch, a page), else one entry per iteration; iterations that gave nothing are left out.
 */
export function collected(results: readonly unknown[]): unknown[] {
  const given = results.filter((r) => r !== null && r !== undefined);
  return given.every(Array.isArray) ? (given as unknown[][]).flat() : given;
}

const isEmpty = (value: unknown): boolean => value === null || value === undefined || (Array.isArray(value) && value.length === 0);

export default defineNode({
  type: 'loop',
  version: 1,
  displayName: 'Loop',
  description:
    "Runs the nodes connected to its `loop` output once per iteration; connect the last of them back to this node to hand each iteration's result back. `items` mode sends one batch of the input array per iteration (Split in Batches); `repeat` mode sends {iteration, previous} until the body gives back nothing. When it ends, the `done` output carries what the body gave back, concatenated.",
  parameters: LoopParameters,
  defaultRunMode: 'input',
  outputs: ['loop', 'done'],
  loop: true,
  execute(ctx) {
    if (ctx.runMode !== 'input' || !ctx.loop) return toOutput('done', []);
    const { iteration, results } = ctx.loop;
    const { mode, batchSize, maxIterations, stopWhenEmpty, continueWhile } = ctx.params;
    if (mode === 'items') {
      const items = Array.isArray(ctx.input) ? ctx.input : ctx.input === null || ctx.input === undefined ? [] : [ctx.input];
      const start = iteration * batchSize;
      return start < items.length ? toOutput('loop', items.slice(start, start + batchSize)) : toOutput('done', collected(results));
    }
    const previous = iteration > 0 ? (results[iteration - 1] ?? null) : null;
    const finished = iteration >= maxIterations || !continueWhile || (iteration > 0 && stopWhenEmpty && isEmpty(previous));
    return finished ? toOutput('done', collected(results)) : toOutput('loop', { iteration, previous });
  },
});
