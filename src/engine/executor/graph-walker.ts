import { ErrorCode } from '../../common/app-error';
import type { NodeInput } from '../../sdk';
import type { CompiledNode } from '../compiler/compiled-plan';
import { isRunInterrupt } from '../run-interrupt';
import { sleep } from '../signals';
import { Execution, Suspension } from './execution';
import { incomingOf, settle } from './graph-routing';
import { BodyRunner, LoopRunner } from './loop-runner';
import type { NodeRunner } from './node-runner';
import { baseStep, emit, finishedStep, interruptedStep, keptOutputs, recordedValue, recordedWithJson } from './step-records';
import { classify, interruptOf, redactError, StepFailure } from './step-failure';

/**
 * Walks nodes in execution order: each runs once all the nodes it reads from are settled, with
 * the data of its live incoming edges, or is skipped (no live edge, a failure before it, the run
 * stopped). Each step ends in its record; a failure is recorded, not thrown (unless the run stops).
 */
export class GraphWalker implements BodyRunner {
  private readonly loops: LoopRunner;

  constructor(private readonly nodes: NodeRunner) {
    this.loops = new LoopRunner(nodes, this);
  }

  /** Runs `nodes` (a loop body's, or the top level) in order; nodes of inner loops run with their loop. */
  async runNodes(run: Execution, nodes: readonly CompiledNode[], loop: CompiledNode | null): Promise<void> {
    for (const node of nodes) {
      if (run.states.has(node.id)) continue;
      run.stoppedBy ??= interruptOf(run.signal);
      if (run.stoppedBy?.reason === 'shutdown') return;
      if (run.stoppedBy) {
        await skip(run, node);
        continue;
      }
      const incoming = incomingOf(run, node);
      // The trigger, and the node a test starts at, take the run's input instead of their edges'.
      const starts = node === run.plan.trigger || node.id === run.request.test?.nodeId;
      if (!starts && (incoming.blocked || !incoming.inputs.some((i) => i.live))) {
        await skip(run, node);
        continue;
      }
      const input = starts ? run.request.input : incoming.input;
      if (node.disabled) await passThrough(run, node, input);
      else if (node.node.definition.loop) await this.loops.run(run, node, input, incoming.inputs);
      else await this.runStep(run, node, input, incoming.inputs, loop);
    }
  }

  /** One node's execution with its record; a failure is recorded, not thrown (unless the run stops). */
  private async runStep(
    run: Execution,
    node: CompiledNode,
    input: unknown,
    inputs: readonly NodeInput[],
    loop: CompiledNode | null,
  ): Promise<void> {
    // The trigger runs again on each attempt of a run (its output is the run's input): a run resumed
    // after a pause keeps the times it first ran at, so its timeline still starts with it.
    const earlier =
      node === run.plan.trigger
        ? run.request.previous?.find((s) => s.nodeId === node.id && !s.reused && s.startedAt && s.finishedAt)
        : undefined;
    const startedAt = earlier?.startedAt ?? new Date();
    const recorded = recordedWithJson(run, input);
    const recordedInput = recorded.value;
    try {
      const result = await this.nodes.run(run, node, input, inputs, startedAt);
      // A wait already due (zero, or a time past) does not wait: no pause, no job to resume it.
      if (result.decision && (loop !== null || run.request.holdWaits)) {
        // Nothing could resume it: a decision resumes a run parked in the store, and these hold their worker.
        throw new StepFailure(
          {
            code: ErrorCode.NODE_CONFIGURATION,
            message: `Node "${node.id}" waits for a person's decision, which works at a run's top level only: not inside a loop's body or in a sub-workflow run`,
            details: { nodeId: node.id },
          },
          1,
        );
      }
      if (result.waitUntil && result.waitUntil.getTime() > Date.now()) {
        if (loop === null && !run.request.holdWaits) {
          settle(run, node, result.ports, 'succeeded', false);
          const pending = result.decision ? { output: recordedValue(run, result.decision.pending) } : {};
          await emit(
            run,
            { ...finishedStep(run, node, startedAt, result, recorded), status: 'waiting', ...pending },
            { ports: result.ports, until: result.waitUntil },
          );
          throw new Suspension(result.waitUntil);
        }
        // Inside a loop the whole loop is one unit of progress (and a sub-workflow's parent waits): the wait holds the worker.
        await sleep(Math.max(0, result.waitUntil.getTime() - Date.now()), run.signal);
      }
      settle(run, node, result.ports, result.error ? 'failed' : 'succeeded', false);
      // A trigger's output is the run's input: a resumed run derives it again rather than keep it.
      const keep = loop === null && node !== run.plan.trigger;
      const step = finishedStep(run, node, startedAt, result, recorded);
      await emit(
        run,
        earlier?.finishedAt ? { ...step, finishedAt: earlier.finishedAt } : step,
        keep ? keptOutputs(node, result.ports, step) : undefined,
      );
    } catch (error) {
      if (error instanceof Suspension) throw error;
      const interrupt = isRunInterrupt(error) ? error : interruptOf(run.signal);
      if (interrupt) {
        run.stoppedBy = interrupt;
        if (interrupt.reason === 'shutdown') return;
        await emit(run, { ...interruptedStep(node, startedAt, interrupt), input: recordedInput });
        settle(run, node, new Map(), interrupt.reason === 'timeout' ? 'failed' : 'canceled', true);
        if (interrupt.reason === 'timeout') run.failure ??= { code: ErrorCode.TIMEOUT, message: interrupt.message, nodeId: node.id };
        return;
      }
      const stepFailure = error instanceof StepFailure ? error : new StepFailure(classify(error).error, 1);
      const stepError = redactError(stepFailure.error, run.request.redactor);
      await emit(
        run,
        Object.assign(baseStep(node), {
          status: 'failed' as const,
          attempts: stepFailure.attempts,
          startedAt,
          finishedAt: new Date(),
          input: recordedInput,
          error: stepError,
        }),
      );
      settle(run, node, new Map(), 'failed', true);
      run.failure ??= { ...stepError, message: `Node "${node.id}" failed: ${stepError.message}`, nodeId: node.id };
    }
  }
}

/**
 * A disabled node, as n8n does it: it does not run, what it received goes on unchanged from its
 * first output (nodes after it read it as its output), and its step says skipped, with that data.
 */
async function passThrough(run: Execution, node: CompiledNode, input: unknown): Promise<void> {
  settle(run, node, new Map([[node.outputs[0], input]]), 'succeeded', false);
  const recorded = recordedValue(run, input);
  await emit(
    run,
    Object.assign(baseStep(node), {
      status: 'skipped' as const,
      attempts: 0,
      startedAt: null,
      finishedAt: null,
      input: recorded,
      output: recorded,
    }),
  );
}

async function skip(run: Execution, node: CompiledNode): Promise<void> {
  settle(run, node, new Map(), 'skipped', false);
  // Assigned onto baseStep's new object rather than spread into a literal: see contextFor (node-context.ts).
  await emit(run, Object.assign(baseStep(node), { status: 'skipped' as const, attempts: 0, startedAt: null, finishedAt: null }));
}
