import type { LoopState } from '../../sdk';
import type { StepError } from '../../storage/ports/run-store.port';
import type { Binding, NodeGuard, NodeResult, NodeShared } from './execution';
import { routeInput, routeItems } from './graph-routing';
import { asObject, redactError, StepFailure } from './step-failure';

/** Runs one execution of a node (one item) with its tries; the node runner is one. */
export interface ItemRunner {
  runItem(guard: NodeGuard, binding: Binding, shared: NodeShared): Promise<{ output: unknown; attempts: number }>;
}

/**
 * A node in its run mode: once with the whole input (a loop node always), or once per item of an
 * array (a single value is one item) with the results in order. What a failure becomes when the
 * node lets the run go on is decided here, for the input and for each item.
 */
export async function runByMode(runner: ItemRunner, guard: NodeGuard, input: unknown, shared: NodeShared, loopState?: LoopState): Promise<NodeResult> {
  const { node, run } = guard;
  const { request } = run;
  if (node.runMode === 'input' || node.node.definition.loop) {
    try {
      const { output, attempts } = await runner.runItem(guard, { runMode: 'input', input, ...(loopState ? { loop: loopState } : {}) }, shared);
      return { ...routeInput(node, output), attempts, error: null };
    } catch (error) {
      if (!(error instanceof StepFailure) || !node.continueOnError) throw error;
      const stepError = redactError(error.error, request.redactor);
      return { ports: new Map([[node.outputs[0], { error: stepError }]]), attempts: error.attempts, error: stepError };
    }
  }
  const items = Array.isArray(input) ? input : [input];
  const outputs: unknown[] = [];
  let attempts = 0;
  let firstError: StepError | null = null;
  for (let index = 0; index < items.length; index++) {
    try {
      const result = await runner.runItem(guard, { runMode: 'item', item: items[index], itemIndex: index }, shared);
      attempts = Math.max(attempts, result.attempts);
      outputs.push(result.output);
    } catch (error) {
      if (!(error instanceof StepFailure)) throw error;
      const stepError = redactError(error.error, request.redactor);
      const located = { ...stepError, details: { ...(asObject(stepError.details) ?? {}), itemIndex: index } };
      if (!node.continueOnError) throw new StepFailure(located, Math.max(attempts, error.attempts));
      attempts = Math.max(attempts, error.attempts);
      firstError ??= located;
      outputs.push({ error: located });
    }
  }
  return { ...routeItems(node, outputs), attempts, error: firstError };
}
