import { LoopState, NodeContext, NodeInput, NodeTimeoutError } from '../../sdk';
import type { CompiledNode } from '../compiler/compiled-plan';
import type { TryPolicy } from '../compiler/failure-settings';
import { isRunInterrupt } from '../run-interrupt';
import { childSignal, followUnless, raceSignal, sleep } from '../signals';
import type { Binding, Execution, NodeGuard, NodeResult, NodeShared } from './execution';
import { contextFor, sharedFor } from './node-context';
import type { ParameterResolver } from './parameter-resolver';
import type { ExecutorDependencies } from './run-contract';
import { ItemRunner, runByMode } from './run-modes';
import { baseStep } from './step-records';
import { classify, StepFailure } from './step-failure';

/** Exponential backoff stops growing here (the longest wait a node's settings may ask for). */
const MAX_BACKOFF_MS = 5 * 60 * 1000;

/**
 * One node's execution: in its run mode, each execution with its tries (backoff between them for
 * failures that may pass), each try within the node's time limit and the run's signal. A node
 * starts only once the nodes finished before it are stored; one that must not run twice is marked
 * as started before its first try, and finishes what it started when the process stops.
 */
export class NodeRunner implements ItemRunner {
  constructor(
    private readonly deps: ExecutorDependencies,
    private readonly parameters: ParameterResolver,
  ) {}

  async run(
    run: Execution,
    node: CompiledNode,
    input: unknown,
    inputs: readonly NodeInput[],
    startedAt: Date,
    loopState?: LoopState,
  ): Promise<NodeResult> {
    // Shared by every item and try of this node.
    const shared = sharedFor(this.deps, run, node, inputs);
    const guard: NodeGuard = { node, run, startedAt, marked: false };
    return runByMode(this, guard, input, shared, loopState);
  }

  /** One execution of the node (one item), with its retries. */
  async runItem(guard: NodeGuard, binding: Binding, shared: NodeShared): Promise<{ output: unknown; attempts: number }> {
    const { node, run } = guard;
    const runSignal = run.signal;
    const params = node.staticParams ?? (await this.parameters.resolve(node, binding, shared.nodes, run.request, runSignal));
    const idempotent = node.idempotent(params);
    if (!idempotent && !guard.marked) {
      // Stored before the node starts, with the nodes finished before it: a worker that dies now
      // leaves a trace the next one reads.
      guard.marked = guard.settled = true;
      await run.listener.started(
        Object.assign(baseStep(node), { status: 'running' as const, attempts: 0, startedAt: guard.startedAt, finishedAt: null }),
      );
    } else if (!guard.settled) {
      // The nodes finished before this one are stored first: a worker that dies from here on leaves them done.
      guard.settled = true;
      await run.listener.starting?.();
    }
    // A node that must not run twice finishes what it started when the process stops: its record is then true.
    const signal = idempotent ? runSignal : (run.shielded ??= unlessShutdown(runSignal)).signal;
    for (let attempt = 1; ; attempt++) {
      const limit = childSignal(
        signal,
        node.timeoutMs,
        () => new NodeTimeoutError(`Node "${node.id}" timed out after ${node.timeoutMs} ms`),
      );
      try {
        const ctx = contextFor(this.deps, run, node, binding, params, shared, limit.signal);
        // The node may change what it was given (or what earlier nodes gave): recorded texts are made anew after it.
        run.lastRecorded = undefined;
        const output = await raceSignal(invoke(node, ctx), limit.signal);
        // A credential echoed back by a server goes no further than the node that sent it.
        const masked = run.credentialMasks.active ? run.credentialMasks.value(output) : output;
        return { output: masked === undefined ? null : masked, attempts: attempt };
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const stepError = classify(error);
        if (!stepError.retryable || attempt >= node.tries.maxTries) throw new StepFailure(stepError.error, attempt);
        await sleep(waitBefore(attempt + 1, node.tries), signal);
      } finally {
        limit.dispose();
      }
    }
  }
}

/** The wait before try number `attempt` (the second and later): the same each time, or doubling from the first wait. */
export function waitBefore(attempt: number, tries: TryPolicy): number {
  return tries.backoff === 'exponential' ? Math.min(tries.waitMs * 2 ** (attempt - 2), MAX_BACKOFF_MS) : tries.waitMs;
}

function invoke(node: CompiledNode, ctx: NodeContext<object>): Promise<unknown> {
  try {
    return Promise.resolve(node.node.definition.execute(ctx));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Follows `parent` except when the process stops: the nodes it guards then finish first. Dispose of it when the run is done. */
function unlessShutdown(parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  return followUnless(parent, (reason) => !(isRunInterrupt(reason) && reason.reason === 'shutdown'));
}
