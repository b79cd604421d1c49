import { ErrorCode } from '../../common/app-error';
import type { LoopState, NodeInput } from '../../sdk';
import type { StepError } from '../../domain/step.model';
import type { CompiledNode } from '../compiler/compiled-plan';
import { isRunInterrupt, RunInterrupt } from '../run-interrupt';
import type { Execution, NodeResult } from './execution';
import { isInside, isLive, settle, unsettle } from './graph-routing';
import { LoopRecords } from './loop-records';
import type { NodeRunner } from './node-runner';
import { baseStep, emit, finishedStep, interruptedStep, recordedWithJson } from './step-records';
import { classify, interruptOf, redactError, StepFailure } from './step-failure';

/** A loop that has not sent anything to its `done` output after this many iterations fails. */
export const MAX_LOOP_ITERATIONS = 10_000;
/** Iterations a loop runs before it lets the event loop serve what else waits. */
const YIELD_EVERY_ITERATIONS = 16;

/** Runs the nodes of a loop's body, in order, for one iteration (the graph walker). */
export interface BodyRunner {
  runNodes(run: Execution, nodes: readonly CompiledNode[], loop: CompiledNode | null): Promise<void>;
}

/**
 * A loop node is executed once per iteration with `ctx.loop`; while it sends to `loop`, its body
 * runs on that data and what the body sends back (its back edges) joins `loop.results`. The
 * records of its body's nodes, one per node with an input and output per iteration, are written
 * when the loop ends (however it ends), then the loop's own: a record rewritten after every
 * iteration would make a loop's cost grow with the square of its iterations. What must be
 * stored before it starts (a node that must not run twice) still is, each time.
 */
export class LoopRunner {
  constructor(
    private readonly nodes: NodeRunner,
    private readonly body: BodyRunner,
  ) {}

  async run(run: Execution, loop: CompiledNode, input: unknown, inputs: readonly NodeInput[]): Promise<void> {
    const records = new LoopRecords();
    const parentListener = run.listener;
    const parentSteps = run.steps;
    run.listener = records.listenerFor(parentListener);
    run.steps = [];
    let end: () => Promise<void>;
    try {
      end = await this.iterate(run, loop, input, inputs);
    } finally {
      run.listener = parentListener;
      run.steps = parentSteps;
    }
    for (const step of records.records()) await emit(run, step);
    await end();
  }

  /** Runs the loop's iterations; returns what records how it ended, for after its body's records. */
  private async iterate(run: Execution, loop: CompiledNode, input: unknown, inputs: readonly NodeInput[]): Promise<() => Promise<void>> {
    const body = run.plan.nodes.filter((n) => n.loop === loop.id);
    const inside = run.plan.nodes.filter((n) => isInside(run.plan, n, loop.id));
    const results: unknown[] = [];
    // The same read-only view every iteration: a copy each time would cost the square of the iterations.
    const loopState: LoopState = { iteration: 0, results: readOnlyView(results) };
    const recorded = recordedWithJson(run, input);
    const recordedInput = recorded.value;
    const startedAt = new Date();
    let attempts = 0;
    for (let iteration = 0; ; iteration++) {
      // A body of nodes that answer at once would hold the event loop for all its iterations: every
      // other request and run of the process waited (seconds, for a few thousand), so each few give it a turn.
      if (iteration > 0 && iteration % YIELD_EVERY_ITERATIONS === 0) await new Promise((resolve) => setImmediate(resolve));
      let result: NodeResult;
      try {
        result = await this.nodes.run(run, loop, input, inputs, startedAt, { ...loopState, iteration });
      } catch (error) {
        const interrupt = isRunInterrupt(error) ? error : interruptOf(run.signal);
        if (interrupt) return () => loopInterrupted(run, loop, startedAt, interrupt, recordedInput);
        const failure = error instanceof StepFailure ? error.error : classify(error).error;
        return () => loopFailed(run, loop, startedAt, iteration, redactError(failure, run.request.redactor), recordedInput);
      }
      attempts = Math.max(attempts, result.attempts);
      if (result.ports.has('done') || !result.ports.has('loop')) {
        const ports = new Map([...result.ports].filter(([name]) => name !== 'loop'));
        settle(run, loop, ports, result.error ? 'failed' : 'succeeded', false);
        const step = { ...finishedStep(run, loop, startedAt, { ...result, ports, attempts }, recorded), iterations: iteration };
        return () => emit(run, step, { ports });
      }
      // Asked for one more after the last there may be: the loop node said "done" at MAX_LOOP_ITERATIONS if it was going to.
      if (iteration >= MAX_LOOP_ITERATIONS) {
        const error: StepError = {
          code: ErrorCode.NODE_CONFIGURATION,
          message: `Loop "${loop.id}" did not finish within ${MAX_LOOP_ITERATIONS} iterations`,
          details: { nodeId: loop.id },
        };
        return () => loopFailed(run, loop, startedAt, iteration, error, recordedInput);
      }
      // One iteration of the body, its records gathered per node.
      for (const node of inside) unsettle(run, node);
      settle(run, loop, new Map([['loop', result.ports.get('loop')]]), 'succeeded', false);
      await this.body.runNodes(run, body, loop);
      const stoppedBy = run.stoppedBy;
      if (stoppedBy) return () => loopInterrupted(run, loop, startedAt, stoppedBy, recordedInput);
      const failed = inside.find((n) => run.states.get(n.id)?.blocking);
      if (failed) {
        const cause = run.failure;
        run.failure = null;
        const error: StepError = {
          code: cause?.code ?? ErrorCode.INTERNAL,
          message: `Iteration ${iteration} failed at node "${failed.id}": ${cause?.message ?? 'see its step'}`,
          details: { nodeId: failed.id, iteration },
        };
        return () => loopFailed(run, loop, startedAt, iteration + 1, error, recordedInput);
      }
      // One entry per iteration (null when the body sent nothing back), so results[i] is iteration i's.
      if (loop.backEdges.length) {
        const back = loop.backEdges.filter((e) => isLive(run, e.from, e.output)).map((e) => run.states.get(e.from)!.ports.get(e.output));
        results.push(back.length === 0 ? null : back.length === 1 ? back[0] : back);
      }
    }
  }
}

async function loopInterrupted(
  run: Execution,
  loop: CompiledNode,
  startedAt: Date,
  interrupt: RunInterrupt,
  input: unknown,
): Promise<void> {
  unsettle(run, loop);
  run.stoppedBy = interrupt;
  if (interrupt.reason === 'shutdown') return;
  await emit(run, { ...interruptedStep(loop, startedAt, interrupt), input });
  settle(run, loop, new Map(), interrupt.reason === 'timeout' ? 'failed' : 'canceled', true);
  if (interrupt.reason === 'timeout') run.failure ??= { code: ErrorCode.TIMEOUT, message: interrupt.message, nodeId: loop.id };
}

async function loopFailed(
  run: Execution,
  loop: CompiledNode,
  startedAt: Date,
  iterations: number,
  error: StepError,
  input: unknown,
): Promise<void> {
  unsettle(run, loop);
  await emit(run, { ...baseStep(loop), status: 'failed', attempts: 1, startedAt, finishedAt: new Date(), input, error, iterations });
  settle(run, loop, new Map(), 'failed', true);
  run.failure ??= { ...error, message: `Node "${loop.id}" failed: ${error.message}`, nodeId: loop.id };
}

/** `array` as a node may read it but not change it, without a copy. */
function readOnlyView<T>(array: T[]): readonly T[] {
  const refuse = (): never => {
    throw new TypeError('loop.results is read-only');
  };
  return new Proxy(array, {
    set: refuse,
    deleteProperty: refuse,
    defineProperty: refuse,
    setPrototypeOf: refuse,
    preventExtensions: refuse,
  });
}
