import type { LoopState } from '../../sdk';
import type { StepError } from '../../domain/step.model';
import type { CompiledNode } from '../compiler/compiled-plan';
import { ERROR_OUTPUT } from '../compiler/failure-settings';
import type { Binding, NodeGuard, NodeResult, NodeShared } from './execution';
import { routeInput, routeItems } from './graph-routing';
import { asObject, redactError, StepFailure } from './step-failure';

/** Runs one execution of a node (one item) with its tries; the node runner is one. */
export interface ItemRunner {
  runItem(guard: NodeGuard, binding: Binding, shared: NodeShared): Promise<{ output: unknown; attempts: number }>;
}

/**
 * A node in its run mode: once with the whole input (a loop node always), or once per item of an
 * array (a single value is one item) with the results in order. What a failure becomes is decided
 * here, by the node's onError, for the input and for each item: `stop` throws it (the step fails
 * and blocks what follows); `continue` puts `{error}` where the result would have gone;
 * `errorOutput` sends the failed input or items to the `error` output (see failedEntry) and the
 * rest to the node's outputs as usual.
 */
export async function runByMode(
  runner: ItemRunner,
  guard: NodeGuard,
  input: unknown,
  shared: NodeShared,
  loopState?: LoopState,
): Promise<NodeResult> {
  const { node, run } = guard;
  const { request } = run;
  if (node.runMode === 'input' || node.node.definition.loop) {
    try {
      const { output, attempts } = await runner.runItem(
        guard,
        { runMode: 'input', input, ...(loopState ? { loop: loopState } : {}) },
        shared,
      );
      return Object.assign(routeInput(node, output), { attempts, error: null });
    } catch (error) {
      if (!(error instanceof StepFailure) || node.onError === 'stop') throw error;
      const stepError = redactError(error.error, request.redactor);
      const ports = new Map([
        node.onError === 'continue' ? [node.outputs[0], { error: stepError }] : [ERROR_OUTPUT, failedEntry(input, stepError, 'input')],
      ]);
      return { ports, attempts: error.attempts, error: stepError };
    }
  }
  const items = Array.isArray(input) ? input : [input];
  const outputs: unknown[] = [];
  let failed: unknown[] | null = null;
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
      if (node.onError === 'stop') throw new StepFailure(located, Math.max(attempts, error.attempts));
      attempts = Math.max(attempts, error.attempts);
      firstError ??= located;
      if (node.onError === 'continue') outputs.push({ error: located });
      else (failed ??= []).push(failedEntry(items[index], located, 'item'));
    }
  }
  if (!failed) return Object.assign(routeItems(node, outputs), { attempts, error: firstError });
  return Object.assign(routeWithFailures(node, outputs, failed), { attempts, error: firstError });
}

/**
 * What the `error` output carries for a failed input or item: the item itself with an `error`
 * field added (`{code, message, details?}`) when it is an object, else `{item, error}` (`{input,
 * error}` in run mode input), so every entry has its error at the same place.
 */
export function failedEntry(value: unknown, error: StepError, as: 'input' | 'item'): Record<string, unknown> {
  const object = asObject(value);
  return object ? { ...object, error } : { [as]: value ?? null, error };
}

/** Run mode item with errorOutput: what succeeded goes on as usual (nothing, when every item failed); the failed items go to `error`. */
function routeWithFailures(node: CompiledNode, outputs: unknown[], failed: unknown[]): Pick<NodeResult, 'ports' | 'waitUntil'> {
  const routed = outputs.length ? routeItems(node, outputs) : { ports: new Map<string, unknown>() };
  routed.ports.set(ERROR_OUTPUT, failed);
  return routed;
}
