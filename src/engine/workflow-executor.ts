import type { Logger } from 'pino';
import { ErrorCode, FieldError, isAppError } from '../common/app-error';
import {
  CodeSandbox,
  isRoutedOutput,
  isWaitRequest,
  LanguageModels,
  LoopState,
  NodeContext,
  NodeInput,
  NodeLogger,
  NodeTimeoutError,
  VariableValue,
  WorkflowsFacade,
} from '../sdk';
import type { RunError, StepError, StepRecord } from './step.model';
import { ParameterDecider } from './ai-decide/parameter-decider.port';
import { NodeCollectionsProvider } from './node-collections.port';
import { nodeHttpClient, OutboundFetch } from './node-http-client';
import { nodeFailure } from './node-failure';
import { NO_LANGUAGE_MODEL, NO_SANDBOX, NO_WORKFLOWS } from './node-services';
import { Redactor } from './redactor';
import { isRunInterrupt, RunInterrupt } from './run-interrupt';
import { childSignal, raceSignal, sleep } from './signals';
import { buildParams, CompiledNode, CompiledWorkflow, ExpressionParameter } from './workflow-compiler';

/** The expression engine as the executor uses it (src/engine/expressions implements it). */
export interface ExpressionEvaluator {
  evaluate(source: string, scope: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
}

export interface ExecutorDependencies {
  expressions: ExpressionEvaluator;
  fetcher: OutboundFetch;
  collections: NodeCollectionsProvider;
  /** `ctx.models`: the configured language model; absent when none is. */
  models?: LanguageModels;
  /** `ctx.sandbox`: JavaScript in the isolate pool (the Code node). */
  sandbox?: CodeSandbox;
  /** Chooses AI Decide parameters; absent when no language model is configured. */
  decider?: ParameterDecider;
  logger: Logger;
  runTimeoutMs: number;
}

/** Seals a node's outputs for the store (they may hold secrets) and opens them again. */
export interface StateSealer {
  seal(value: unknown): string;
  open(sealed: string): unknown;
}

export interface RunRequest {
  runId: string;
  workflowId: string;
  /** Whose rights `ctx.collections` acts with. */
  actingUserId: string;
  input: unknown;
  /** Decrypted; never stored as they are. */
  variables: Readonly<Record<string, VariableValue>>;
  redactor: Redactor;
  /** Aborted with a RunInterrupt on cancel or shutdown. */
  signal?: AbortSignal;
  /** Steps an earlier attempt of the run left (or copied from the run it retries): what to continue from. */
  previous?: readonly StepRecord[];
  /** Opens the sealed state of `previous` steps. */
  sealer?: StateSealer;
  /** `ctx.workflows` of a node: sub-workflow runs linked to this run and that node. */
  workflows?: (nodeId: string) => WorkflowsFacade;
  /** Waits hold the worker instead of pausing the run (a sub-workflow, whose parent waits for it). */
  holdWaits?: boolean;
  now?: () => Date;
}

/** A finished node's whole outputs (by output name), and for a Wait node when the run goes on. */
export interface KeptOutputs {
  ports: Map<string, unknown>;
  until?: Date;
}

/**
 * A node's kept outputs as a step's `state`, sealed; null when too large to keep (a resumed run
 * then runs the node again, or fails it if it must not run twice). `open` reads it back.
 */
export function sealOutputs(sealer: StateSealer, kept: KeptOutputs): string | null {
  const sealed = sealer.seal({ ports: [...kept.ports], ...(kept.until ? { until: kept.until.toISOString() } : {}) });
  return sealed.length > MAX_STATE_CHARS ? null : sealed;
}

/** Where step records go; the worker writes them to the run store. */
export interface StepListener {
  /**
   * After each node (and, for the nodes of a loop's body, after each iteration), with its record
   * and, for a node a resumed run can continue from, its outputs: sealed into the record's `state`
   * by the listener when it writes the record (a run that succeeds before that never pays for it).
   */
  finished(step: StepRecord, kept?: KeptOutputs): Promise<void> | void;
  /** Before a node that must not run twice starts; resolves once the record is stored. */
  started(step: StepRecord): Promise<void>;
}

export interface RunOutcome {
  /**
   * `interrupted`: the process is stopping; the run is not over and must go back to the queue.
   * `waiting`: a Wait node paused the run until `resumeAt`.
   */
  status: 'succeeded' | 'failed' | 'canceled' | 'interrupted' | 'waiting';
  error: RunError | null;
  steps: StepRecord[];
  /** The whole output of the last node the run executed (outside loops), unmasked: a sub-workflow's or tool's answer. */
  output?: unknown;
  resumeAt?: Date;
}

/** Largest stored output of one step; larger ones are replaced by a note (successors still get all of it). */
export const MAX_RECORDED_OUTPUT_CHARS = 1024 * 1024;
/** Largest sealed state of one step: beyond it, a resumed run runs the node again (or fails, if it must not). */
export const MAX_STATE_CHARS = 16 * 1024 * 1024;
/** A loop that has not sent anything to its `done` output after this many iterations fails. */
export const MAX_LOOP_ITERATIONS = 10_000;
const MAX_BACKOFF_MS = 5 * 60 * 1000;
/** Questions to the model per execution: the first, and one correction of an answer that did not validate. */
export const AI_DECIDE_ROUNDS = 2;
/** The parameter AI Decide reads as the author's guidance, when a node has one. */
const INSTRUCTIONS_PARAMETER = 'instructions';

class StepFailure extends Error {
  constructor(
    readonly error: StepError,
    readonly attempts: number,
  ) {
    super(error.message);
  }
}

/** Stops the run where it is: the process is stopping, or the run reached a Wait node. */
class Suspension extends Error {
  constructor(readonly resumeAt: Date) {
    super('the run waits');
  }
}

interface NodeShared {
  nodes: Readonly<Record<string, unknown>>;
  inputs: readonly NodeInput[];
  collections: NodeContext<object>['collections'];
  logger: ScopedNodeLogger;
  workflows: WorkflowsFacade;
}

/** One execution of a node, shared by its items and tries. */
interface NodeGuard {
  node: CompiledNode;
  run: Execution;
  startedAt: Date;
  /** The record saying it started was stored (a node that must not run twice). */
  marked: boolean;
  /** The run's signal without its shutdown, made once for the items that must not run twice. */
  shielded?: { signal: AbortSignal; dispose: () => void };
}

/** What a node's execution produced, routed to its outputs. */
interface NodeResult {
  /** Live outputs: an output that received nothing is absent. */
  ports: Map<string, unknown>;
  attempts: number;
  /** Set when the node failed but continueOnError let the run go on (the error is in the output). */
  error: StepError | null;
  /** A Wait node asked the run to pause until then. */
  waitUntil?: Date;
}

/** Where a node stands in this run. */
interface NodeState {
  status: 'succeeded' | 'failed' | 'skipped' | 'canceled';
  ports: Map<string, unknown>;
  /** The node's output as expressions (`nodes.<id>`) and records see it. */
  value: unknown;
  /** Failed without continueOnError: nodes after it do not run. */
  blocking: boolean;
}

/** One run's execution: the plan, what each node produced, and where records go. */
interface Execution {
  plan: CompiledWorkflow;
  request: RunRequest;
  signal: AbortSignal;
  states: Map<string, NodeState>;
  /** Outputs by node id, for `nodes.<id>` in expressions. */
  values: Record<string, unknown>;
  listener: StepListener;
  steps: StepRecord[];
  failure: RunError | null;
  /** Set only when an interrupt kept a node from completing: a cancel after the last node does not cancel a finished run. */
  stoppedBy: RunInterrupt | null;
}

/**
 * Runs a compiled workflow. Nodes go in execution order; each runs once all the nodes it reads
 * from are settled, with the data of its live incoming edges: one edge, its data; several, the
 * array of their data in edge order. A node none of whose edges is live (its predecessors were
 * skipped, or sent nothing to the outputs it reads) is skipped, and so is a node after a failure:
 * independent branches run on, and the run fails at the end if any node failed. A loop node runs
 * its body once per iteration until it sends to its `done` output. Run modes, per-node retry with
 * backoff, node and run time limits, cancel through AbortSignal, AI Decide. Pure orchestration:
 * every side effect happens inside nodes, every record goes out through the listener, masked.
 *
 * Resuming: with `previous` steps, nodes that finished (their sealed outputs kept) are not run
 * again; a node that must not run twice and was in flight fails with INTERRUPTED.
 */
export class WorkflowExecutor {
  constructor(private readonly deps: ExecutorDependencies) {}

  async run(plan: CompiledWorkflow, request: RunRequest, listener: StepListener): Promise<RunOutcome> {
    const parent = request.signal ?? new AbortController().signal;
    const runLimit = childSignal(parent, this.deps.runTimeoutMs, () => new RunInterrupt('timeout', `The run exceeded its time limit of ${this.deps.runTimeoutMs} ms`));
    const run: Execution = {
      plan,
      request,
      signal: runLimit.signal,
      states: new Map(),
      values: {},
      listener,
      steps: [],
      failure: null,
      stoppedBy: null,
    };
    try {
      await this.restore(run);
      await this.runNodes(run, plan.nodes.filter((n) => n.loop === null), null);
    } catch (error) {
      if (!(error instanceof Suspension)) throw error;
      return { status: 'waiting', error: null, steps: run.steps, resumeAt: error.resumeAt };
    } finally {
      runLimit.dispose();
    }
    const output = lastOutput(run);
    if (run.stoppedBy?.reason === 'shutdown') return { status: 'interrupted', error: null, steps: run.steps };
    if (run.stoppedBy?.reason === 'canceled') return { status: 'canceled', error: { code: ErrorCode.CANCELED, message: 'The run was canceled' }, steps: run.steps, output };
    return { status: run.failure ? 'failed' : 'succeeded', error: run.failure, steps: run.steps, output };
  }

  /** Takes back what earlier attempts finished; fails what must not run twice and was cut short. */
  private async restore(run: Execution): Promise<void> {
    const { plan, request } = run;
    const now = request.now?.() ?? new Date();
    const unfinishedLoops = new Set<string>();
    // In plan order, so a node's predecessors are taken back (or not) before it.
    const previous = [...(request.previous ?? [])].sort((a, b) => (plan.byId.get(a.nodeId)?.position ?? 0) - (plan.byId.get(b.nodeId)?.position ?? 0));
    for (const step of previous) {
      const node = plan.byId.get(step.nodeId);
      if (!node) continue;
      if (node.loop !== null) {
        unfinishedLoops.add(outermostLoop(plan, node));
        continue;
      }
      // An output is only as good as its inputs: it is taken back only when every node before it
      // is too (the trigger derives its output from the input again). When one of them runs again
      // (a retry from a node that failed but let the run go on), a step a retry offered for reuse
      // runs again as well; one of this run's own is judged below, as if it had no output kept.
      const inputsKept = node.predecessors.every((id) => run.states.has(id) || id === plan.trigger.id);
      if (!inputsKept && step.reused) continue;
      const kept = inputsKept && step.state ? this.open(run, step.state) : undefined;
      if ((step.status === 'succeeded' || (step.status === 'failed' && node.continueOnError)) && kept) {
        this.settle(run, node, kept.ports, step.status === 'failed' ? 'failed' : 'succeeded', false);
        run.steps.push(step);
      } else if (step.status === 'waiting' && kept) {
        if (kept.until && kept.until > now) {
          run.steps.push(step);
          throw new Suspension(kept.until);
        }
        this.settle(run, node, kept.ports, 'succeeded', false);
        await this.emit(run, { ...step, status: 'succeeded', finishedAt: now }, { ports: kept.ports });
      } else if (step.status === 'failed' && !node.continueOnError) {
        // Its failure stands: a node that failed is not tried again by a resumed attempt.
        this.settle(run, node, new Map(), 'failed', true);
        run.steps.push(step);
        run.failure ??= { ...(step.error ?? { code: ErrorCode.INTERNAL, message: 'failed' }), message: `Node "${node.id}" failed: ${step.error?.message ?? 'see its step'}`, nodeId: node.id };
      } else if (step.status === 'running' || ((step.status === 'succeeded' || step.status === 'waiting') && !node.alwaysIdempotent)) {
        // It started (or finished, but its output was not kept) and must not run twice.
        await this.failInterrupted(run, node, step.startedAt);
      }
    }
    for (const loopId of unfinishedLoops) {
      if (run.states.has(loopId)) continue;
      const loop = plan.byId.get(loopId)!;
      const unsafe = plan.nodes.filter((n) => isInside(plan, n, loopId) && !n.alwaysIdempotent);
      const touched = (request.previous ?? []).some((s) => unsafe.some((n) => n.id === s.nodeId));
      if (touched) await this.failInterrupted(run, loop, null, `it holds node(s) that must not run twice (${unsafe.map((n) => n.id).join(', ')})`);
    }
  }

  private async failInterrupted(run: Execution, node: CompiledNode, startedAt: Date | null, why = 'it must not run twice'): Promise<void> {
    const error: StepError = {
      code: ErrorCode.INTERRUPTED,
      message: `The worker stopped while node "${node.id}" was running, and ${why}, so it was not run again; retry the run from the failed node if running it again is safe`,
      details: { nodeId: node.id },
    };
    await this.emit(run, { ...baseStep(node), status: 'failed', attempts: 1, startedAt, finishedAt: new Date(), error });
    this.settle(run, node, new Map(), 'failed', true);
    run.failure ??= { ...error, nodeId: node.id };
  }

  /** Runs `nodes` (a loop body's, or the top level) in order; nodes of inner loops run with their loop. */
  private async runNodes(run: Execution, nodes: readonly CompiledNode[], loop: CompiledNode | null): Promise<void> {
    for (const node of nodes) {
      if (run.states.has(node.id)) continue;
      run.stoppedBy ??= interruptOf(run.signal);
      if (run.stoppedBy?.reason === 'shutdown') return;
      if (run.stoppedBy) {
        await this.skip(run, node);
        continue;
      }
      const incoming = this.incomingOf(run, node);
      if (node !== run.plan.trigger && (incoming.blocked || !incoming.inputs.some((i) => i.live))) {
        await this.skip(run, node);
        continue;
      }
      const input = node === run.plan.trigger ? run.request.input : incoming.input;
      if (node.node.definition.loop) await this.runLoop(run, node, input, incoming.inputs);
      else await this.runStep(run, node, input, incoming.inputs, loop);
    }
  }

  /** One node's execution with its record; a failure is recorded, not thrown (unless the run stops). */
  private async runStep(run: Execution, node: CompiledNode, input: unknown, inputs: readonly NodeInput[], loop: CompiledNode | null): Promise<void> {
    const startedAt = new Date();
    const recordedInput = recordedValue(run, input);
    try {
      const result = await this.runNode(run, node, input, inputs, startedAt);
      // A wait already due (zero, or a time past) does not wait: no pause, no job to resume it.
      if (result.waitUntil && result.waitUntil.getTime() > Date.now()) {
        if (loop === null && !run.request.holdWaits) {
          this.settle(run, node, result.ports, 'succeeded', false);
          await this.emit(run, { ...this.finishedStep(run, node, startedAt, result, recordedInput), status: 'waiting' }, { ports: result.ports, until: result.waitUntil });
          throw new Suspension(result.waitUntil);
        }
        // Inside a loop the whole loop is one unit of progress (and a sub-workflow's parent waits): the wait holds the worker.
        await sleep(Math.max(0, result.waitUntil.getTime() - Date.now()), run.signal);
      }
      this.settle(run, node, result.ports, result.error ? 'failed' : 'succeeded', false);
      // A trigger's output is the run's input: a resumed run derives it again rather than keep it.
      const keep = loop === null && node !== run.plan.trigger;
      await this.emit(run, this.finishedStep(run, node, startedAt, result, recordedInput), keep ? { ports: result.ports } : undefined);
    } catch (error) {
      if (error instanceof Suspension) throw error;
      const interrupt = isRunInterrupt(error) ? error : interruptOf(run.signal);
      if (interrupt) {
        run.stoppedBy = interrupt;
        if (interrupt.reason === 'shutdown') return;
        await this.emit(run, { ...interruptedStep(node, startedAt, interrupt), input: recordedInput });
        this.settle(run, node, new Map(), interrupt.reason === 'timeout' ? 'failed' : 'canceled', true);
        if (interrupt.reason === 'timeout') run.failure ??= { code: ErrorCode.TIMEOUT, message: interrupt.message, nodeId: node.id };
        return;
      }
      const stepFailure = error instanceof StepFailure ? error : new StepFailure(classify(error).error, 1);
      const stepError = redactError(stepFailure.error, run.request.redactor);
      await this.emit(run, { ...baseStep(node), status: 'failed', attempts: stepFailure.attempts, startedAt, finishedAt: new Date(), input: recordedInput, error: stepError });
      this.settle(run, node, new Map(), 'failed', true);
      run.failure ??= { ...stepError, message: `Node "${node.id}" failed: ${stepError.message}`, nodeId: node.id };
    }
  }

  /**
   * A loop node is executed once per iteration with `ctx.loop`; while it sends to `loop`, its body
   * runs on that data and what the body sends back (its back edges) joins `loop.results`. The
   * records of its body's nodes, one per node with an input and output per iteration, are written
   * when the loop ends (however it ends), then the loop's own: a record rewritten after every
   * iteration would make a loop's cost grow with the square of its iterations. What must be
   * stored before it starts (a node that must not run twice) still is, each time.
   */
  private async runLoop(run: Execution, loop: CompiledNode, input: unknown, inputs: readonly NodeInput[]): Promise<void> {
    const records = new LoopRecords();
    const parentListener = run.listener;
    const parentSteps = run.steps;
    run.listener = records.listenerFor(parentListener);
    run.steps = [];
    let end: () => Promise<void>;
    try {
      end = await this.iterateLoop(run, loop, input, inputs);
    } finally {
      run.listener = parentListener;
      run.steps = parentSteps;
    }
    for (const step of records.records()) await this.emit(run, step);
    await end();
  }

  /** Runs the loop's iterations; returns what records how it ended, for after its body's records. */
  private async iterateLoop(run: Execution, loop: CompiledNode, input: unknown, inputs: readonly NodeInput[]): Promise<() => Promise<void>> {
    const body = run.plan.nodes.filter((n) => n.loop === loop.id);
    const inside = run.plan.nodes.filter((n) => isInside(run.plan, n, loop.id));
    const results: unknown[] = [];
    // The same read-only view every iteration: a copy each time would cost the square of the iterations.
    const loopState: LoopState = { iteration: 0, results: readOnlyView(results) };
    const recordedInput = recordedValue(run, input);
    const startedAt = new Date();
    let attempts = 0;
    for (let iteration = 0; ; iteration++) {
      if (iteration >= MAX_LOOP_ITERATIONS) {
        const error: StepError = { code: ErrorCode.NODE_CONFIGURATION, message: `Loop "${loop.id}" did not finish within ${MAX_LOOP_ITERATIONS} iterations`, details: { nodeId: loop.id } };
        return () => this.loopFailed(run, loop, startedAt, iteration, error, recordedInput);
      }
      let result: NodeResult;
      try {
        result = await this.runNode(run, loop, input, inputs, startedAt, { ...loopState, iteration });
      } catch (error) {
        const interrupt = isRunInterrupt(error) ? error : interruptOf(run.signal);
        if (interrupt) return () => this.loopInterrupted(run, loop, startedAt, interrupt, recordedInput);
        const failure = error instanceof StepFailure ? error.error : classify(error).error;
        return () => this.loopFailed(run, loop, startedAt, iteration, redactError(failure, run.request.redactor), recordedInput);
      }
      attempts = Math.max(attempts, result.attempts);
      if (result.ports.has('done') || !result.ports.has('loop')) {
        const ports = new Map([...result.ports].filter(([name]) => name !== 'loop'));
        this.settle(run, loop, ports, result.error ? 'failed' : 'succeeded', false);
        const step = { ...this.finishedStep(run, loop, startedAt, { ...result, ports, attempts }, recordedInput), iterations: iteration };
        return () => this.emit(run, step, { ports });
      }
      // One iteration of the body, its records gathered per node.
      for (const node of inside) this.unsettle(run, node);
      this.settle(run, loop, new Map([['loop', result.ports.get('loop')]]), 'succeeded', false);
      await this.runNodes(run, body, loop);
      const stoppedBy = run.stoppedBy;
      if (stoppedBy) return () => this.loopInterrupted(run, loop, startedAt, stoppedBy, recordedInput);
      const failed = inside.find((n) => run.states.get(n.id)?.blocking);
      if (failed) {
        const cause = run.failure;
        run.failure = null;
        const error: StepError = {
          code: cause?.code ?? ErrorCode.INTERNAL,
          message: `Iteration ${iteration} failed at node "${failed.id}": ${cause?.message ?? 'see its step'}`,
          details: { nodeId: failed.id, iteration },
        };
        return () => this.loopFailed(run, loop, startedAt, iteration + 1, error, recordedInput);
      }
      // One entry per iteration (null when the body sent nothing back), so results[i] is iteration i's.
      if (loop.backEdges.length) {
        const back = loop.backEdges.filter((e) => isLive(run, e.from, e.output)).map((e) => run.states.get(e.from)!.ports.get(e.output));
        results.push(back.length === 0 ? null : back.length === 1 ? back[0] : back);
      }
    }
  }

  private async loopInterrupted(run: Execution, loop: CompiledNode, startedAt: Date, interrupt: RunInterrupt, input: unknown): Promise<void> {
    this.unsettle(run, loop);
    run.stoppedBy = interrupt;
    if (interrupt.reason === 'shutdown') return;
    await this.emit(run, { ...interruptedStep(loop, startedAt, interrupt), input });
    this.settle(run, loop, new Map(), interrupt.reason === 'timeout' ? 'failed' : 'canceled', true);
    if (interrupt.reason === 'timeout') run.failure ??= { code: ErrorCode.TIMEOUT, message: interrupt.message, nodeId: loop.id };
  }

  private async loopFailed(run: Execution, loop: CompiledNode, startedAt: Date, iterations: number, error: StepError, input: unknown): Promise<void> {
    this.unsettle(run, loop);
    await this.emit(run, { ...baseStep(loop), status: 'failed', attempts: 1, startedAt, finishedAt: new Date(), input, error, iterations });
    this.settle(run, loop, new Map(), 'failed', true);
    run.failure ??= { ...error, message: `Node "${loop.id}" failed: ${error.message}`, nodeId: loop.id };
  }

  private async skip(run: Execution, node: CompiledNode): Promise<void> {
    this.settle(run, node, new Map(), 'skipped', false);
    await this.emit(run, { ...baseStep(node), status: 'skipped', attempts: 0, startedAt: null, finishedAt: null });
  }

  /** Live edges and their data; `blocked` when a node the edges come from failed (or stopped) for good. */
  private incomingOf(run: Execution, node: CompiledNode): { inputs: NodeInput[]; input: unknown; blocked: boolean } {
    let blocked = false;
    const inputs = node.incoming.map(({ from, output }): NodeInput => {
      const state = run.states.get(from);
      if (state?.blocking || state?.status === 'canceled') blocked = true;
      const live = isLive(run, from, output);
      return { from, output, live, data: live ? state!.ports.get(output) : undefined };
    });
    const live = inputs.filter((i) => i.live);
    return { inputs, input: live.length === 1 ? live[0].data : live.map((i) => i.data), blocked };
  }

  private settle(run: Execution, node: CompiledNode, ports: Map<string, unknown>, status: NodeState['status'], blocking: boolean): void {
    const value = node.outputs.length === 1 ? (ports.get(node.outputs[0]) ?? null) : Object.fromEntries(ports);
    run.states.set(node.id, { status, ports, value, blocking });
    if (status === 'succeeded' || (status === 'failed' && !blocking)) run.values[node.id] = value;
  }

  private unsettle(run: Execution, node: CompiledNode): void {
    run.states.delete(node.id);
    delete run.values[node.id];
  }

  private async emit(run: Execution, step: StepRecord, keep?: KeptOutputs): Promise<void> {
    run.steps.push(step);
    await run.listener.finished(step, keep);
  }

  private open(run: Execution, sealed: string): KeptOutputs | undefined {
    if (!run.request.sealer) return undefined;
    const state = run.request.sealer.open(sealed) as { ports: [string, unknown][]; until?: string };
    return { ports: new Map(state.ports), ...(state.until ? { until: new Date(state.until) } : {}) };
  }

  private async runNode(run: Execution, node: CompiledNode, input: unknown, inputs: readonly NodeInput[], startedAt: Date, loopState?: LoopState): Promise<NodeResult> {
    const { request } = run;
    // Shared by every item and try of this node.
    const shared: NodeShared = {
      nodes: Object.freeze({ ...run.values }),
      inputs,
      collections: this.deps.collections.forUser(request.actingUserId),
      logger: new ScopedNodeLogger(this.deps.logger, request, node.id),
      workflows: request.workflows?.(node.id) ?? NO_WORKFLOWS,
    };
    const guard: NodeGuard = { node, run, startedAt, marked: false };
    try {
      return await this.runItems(guard, input, shared, loopState);
    } finally {
      guard.shielded?.dispose();
    }
  }

  private async runItems(guard: NodeGuard, input: unknown, shared: NodeShared, loopState?: LoopState): Promise<NodeResult> {
    const { node, run } = guard;
    const { request } = run;
    if (node.runMode === 'input' || node.node.definition.loop) {
      try {
        const { output, attempts } = await this.runItem(guard, { runMode: 'input', input, ...(loopState ? { loop: loopState } : {}) }, shared);
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
        const result = await this.runItem(guard, { runMode: 'item', item: items[index], itemIndex: index }, shared);
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

  /** One execution of the node (one item), with its retries. */
  private async runItem(
    guard: NodeGuard,
    binding: { runMode: 'input'; input: unknown; loop?: LoopState } | { runMode: 'item'; item: unknown; itemIndex: number },
    shared: NodeShared,
  ): Promise<{ output: unknown; attempts: number }> {
    const { node, run } = guard;
    const runSignal = run.signal;
    const params = node.staticParams ?? (await this.resolveParams(node, binding, shared.nodes, run.request, runSignal));
    const idempotent = node.idempotent(params);
    if (!idempotent && !guard.marked) {
      // Stored before the node starts: a worker that dies now leaves a trace the next one reads.
      guard.marked = true;
      await run.listener.started({ ...baseStep(node), status: 'running', attempts: 0, startedAt: guard.startedAt, finishedAt: null });
    }
    // A node that must not run twice finishes what it started when the process stops: its record is then true.
    const signal = idempotent ? runSignal : (guard.shielded ??= unlessShutdown(runSignal)).signal;
    for (let attempt = 1; ; attempt++) {
      const limit = childSignal(signal, node.timeoutMs, () => new NodeTimeoutError(`Node "${node.id}" timed out after ${node.timeoutMs} ms`));
      try {
        const ctx = {
          ...binding,
          params,
          variables: run.request.variables,
          ...shared,
          models: this.deps.models ?? NO_LANGUAGE_MODEL,
          sandbox: this.deps.sandbox ?? NO_SANDBOX,
          http: nodeHttpClient(this.deps.fetcher, limit.signal),
          signal: limit.signal,
          runId: run.request.runId,
          workflowId: run.request.workflowId,
          nodeId: node.id,
        } as NodeContext<object>;
        const output = await raceSignal(invoke(node, ctx), limit.signal);
        return { output: output === undefined ? null : output, attempts: attempt };
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const stepError = classify(error);
        if (!stepError.retryable || attempt >= node.maxAttempts) throw new StepFailure(stepError.error, attempt);
        await sleep(Math.min(node.backoffMs * 2 ** (attempt - 1), MAX_BACKOFF_MS), signal);
      } finally {
        limit.dispose();
      }
    }
  }

  private async resolveParams(
    node: CompiledNode,
    binding: { runMode: 'input'; input: unknown; loop?: LoopState } | { runMode: 'item'; item: unknown },
    nodes: Readonly<Record<string, unknown>>,
    request: RunRequest,
    signal: AbortSignal,
  ): Promise<object> {
    const values: Record<string, unknown> = { ...node.fixed };
    const scope = scopeFor(binding, request.variables, nodes);
    for (const expression of node.expressions) {
      let result: unknown;
      try {
        result = await this.deps.expressions.evaluate(expression.source, scope, { signal });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw expressionFailure(node, expression, error, request.redactor);
      }
      values[expression.name] = coerce(result, expression.type);
    }
    if (node.aiParameters.length) return this.decideParams(node, values, binding, request, signal);
    const { instance, problems } = buildParams(node.node, values);
    if (problems.length) throw invalidParams(node, problems, request.redactor, 'after evaluating expressions');
    return instance;
  }

  /**
   * AI Decide: asks the model for the node's `ai` parameters, then coerces and validates its answer
   * like any other value. An answer that does not validate is sent back once with the problems;
   * the model sees no secret (the request is masked like a run record).
   */
  private async decideParams(
    node: CompiledNode,
    values: Record<string, unknown>,
    binding: { runMode: 'input'; input: unknown } | { runMode: 'item'; item: unknown },
    request: RunRequest,
    signal: AbortSignal,
  ): Promise<object> {
    const names = node.aiParameters.map((p) => p.name);
    const decider = this.deps.decider;
    if (!decider) {
      throw new StepFailure(
        { code: ErrorCode.NODE_CONFIGURATION, message: `Node "${node.id}" uses AI Decide for ${names.join(', ')}, but no language model is configured (LLM_URL)`, details: { nodeId: node.id, parameters: names } },
        0,
      );
    }
    const { definition } = node.node;
    const instructions = values[INSTRUCTIONS_PARAMETER];
    const question = request.redactor.value({
      node: { id: node.id, type: definition.type, displayName: definition.displayName, description: definition.description },
      instructions: typeof instructions === 'string' ? instructions : '',
      input: (binding.runMode === 'input' ? binding.input : binding.item) ?? null,
      parameters: node.aiParameters.map(({ name, schema, hint, required }) => ({ name, schema, hint, required })),
    });
    let correction: { answer: unknown; problems: FieldError[] } | undefined;
    for (let round = 1; ; round++) {
      let answer: unknown;
      try {
        answer = await decider.decide({ ...question, ...(correction ? { correction } : {}) }, signal);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const { error: cause } = classify(error);
        throw new StepFailure({ ...cause, message: `AI Decide for node "${node.id}" failed: ${cause.message}`, details: { ...(asObject(cause.details) ?? {}), nodeId: node.id, parameters: names } }, 0);
      }
      const chosen = asObject(answer);
      const decided = { ...values };
      for (const parameter of node.aiParameters) decided[parameter.name] = coerce(chosen?.[parameter.name], parameter.type);
      const { instance, problems } = buildParams(node.node, decided);
      const refused: FieldError[] = chosen ? problems : [{ field: '(answer)', reason: 'must be a JSON object of parameter values' }];
      if (!refused.length) {
        this.deps.logger.debug({ runId: request.runId, nodeId: node.id, chosen: request.redactor.value(pick(chosen!, names)) }, 'AI Decide chose parameters');
        return instance;
      }
      const aiOnly = refused.every((p) => p.field === '(answer)' || names.includes(p.field.split(/[.[]/)[0]));
      if (!aiOnly || round >= AI_DECIDE_ROUNDS) throw invalidParams(node, refused, request.redactor, `after AI Decide chose ${names.join(', ')}`);
      correction = { answer: request.redactor.value(answer), problems: refused };
    }
  }

  /** `input` is already recorded (masked and capped): see recordedValue. */
  private finishedStep(run: Execution, node: CompiledNode, startedAt: Date, result: NodeResult, input: unknown): StepRecord {
    const value = node.outputs.length === 1 ? (result.ports.get(node.outputs[0]) ?? null) : Object.fromEntries(result.ports);
    return {
      ...baseStep(node),
      status: result.error ? 'failed' : 'succeeded',
      attempts: result.attempts,
      startedAt,
      finishedAt: new Date(),
      input,
      output: recordedValue(run, value),
      error: result.error,
    };
  }
}

/**
 * Values of a loop body node over the iterations, as its record keeps them: one entry per
 * iteration while the whole list fits the record limit, then the note `recordable` gives for an
 * output that does not. Its size is kept as it grows, so each iteration costs its own entry only.
 */
class RecordedList {
  private items: unknown[] | null = [];
  private count = 0;
  /** JSON characters of the whole list: brackets, entries and commas. */
  private chars = 2;

  add(value: unknown): void {
    this.chars += (JSON.stringify(value) ?? 'null').length + (this.count > 0 ? 1 : 0);
    this.count++;
    if (this.items && this.chars > MAX_RECORDED_OUTPUT_CHARS) this.items = null;
    this.items?.push(value);
  }

  recorded(): unknown {
    return this.items ?? { notRecorded: true, reason: `output of ${this.chars} characters exceeds the record limit of ${MAX_RECORDED_OUTPUT_CHARS}` };
  }
}

/** Gathers the records of a loop body's nodes over its iterations: one record per node, one input and output per iteration. */
class LoopRecords {
  private readonly byNode = new Map<string, { step: StepRecord; inputs: RecordedList; outputs: RecordedList }>();

  listenerFor(parent: StepListener): StepListener {
    return {
      finished: (step) => this.add(step),
      // Without the iterations' inputs and outputs: written before every iteration of the node, it
      // must not grow with them. The record written when the loop ends has them.
      started: (step) => parent.started({ ...this.merged(step), status: 'running' }),
    };
  }

  add(step: StepRecord): void {
    const earlier = this.byNode.get(step.nodeId);
    const record = earlier ?? { step, inputs: new RecordedList(), outputs: new RecordedList() };
    record.step = this.merged(step);
    if (counts(step)) {
      record.inputs.add(step.input ?? null);
      record.outputs.add(step.output ?? null);
    }
    this.byNode.set(step.nodeId, record);
  }

  /** One record per node that the body reached. */
  records(): StepRecord[] {
    return [...this.byNode.values()].map(({ step, inputs, outputs }) => ({ ...step, input: inputs.recorded(), output: outputs.recorded() }));
  }

  /** The node's record so far, with this step: its worst status, its first start, its last finish. */
  private merged(step: StepRecord): StepRecord {
    const earlier = this.byNode.get(step.nodeId)?.step;
    const ran = step.status !== 'skipped';
    const { input: _input, output: _output, ...fields } = step;
    return {
      ...fields,
      status: earlier?.status === 'failed' ? 'failed' : earlier && !ran ? earlier.status : step.status,
      attempts: Math.max(earlier?.attempts ?? 0, step.attempts),
      startedAt: earlier?.startedAt ?? step.startedAt,
      finishedAt: step.finishedAt ?? earlier?.finishedAt ?? null,
      error: step.error ?? earlier?.error ?? null,
      iterations: (earlier?.iterations ?? 0) + (counts(step) ? 1 : 0),
    };
  }
}

/** A step that ran to an end in an iteration: it adds an entry to its node's inputs and outputs. */
const counts = (step: StepRecord): boolean => step.status !== 'skipped' && step.status !== 'running';

/** `array` as a node may read it but not change it, without a copy. */
function readOnlyView<T>(array: T[]): readonly T[] {
  const refuse = (): never => {
    throw new TypeError('loop.results is read-only');
  };
  return new Proxy(array, { set: refuse, deleteProperty: refuse, defineProperty: refuse, setPrototypeOf: refuse, preventExtensions: refuse });
}

function invoke(node: CompiledNode, ctx: NodeContext<object>): Promise<unknown> {
  try {
    return Promise.resolve(node.node.definition.execute(ctx));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Run mode input: a routed result goes where it says; a plain one to the first output; a wait keeps its output. */
function routeInput(node: CompiledNode, output: unknown): Pick<NodeResult, 'ports' | 'waitUntil'> {
  if (isWaitRequest(output)) return { ports: new Map([[node.outputs[0], output.output]]), waitUntil: output.until };
  if (!isRoutedOutput(output)) return { ports: new Map([[node.outputs[0], output]]) };
  return { ports: new Map(Object.entries(output.outputs).map(([name, value]) => [checkOutput(node, name), value])) };
}

/** Run mode item: each item's result goes to its outputs; an output's value is the array of what it received. */
function routeItems(node: CompiledNode, outputs: unknown[]): Pick<NodeResult, 'ports' | 'waitUntil'> {
  const ports = new Map<string, unknown[]>();
  let waitUntil: Date | undefined;
  const send = (name: string, value: unknown) => {
    const list = ports.get(name);
    if (list) list.push(value);
    else ports.set(name, [value]);
  };
  for (const output of outputs) {
    if (isWaitRequest(output)) {
      if (!waitUntil || output.until > waitUntil) waitUntil = output.until;
      send(node.outputs[0], output.output);
    } else if (isRoutedOutput(output)) {
      for (const [name, value] of Object.entries(output.outputs)) send(checkOutput(node, name), value);
    } else {
      send(node.outputs[0], output);
    }
  }
  // No items at all: the first output is an empty list, as a node over an empty array always gave.
  if (outputs.length === 0) ports.set(node.outputs[0], []);
  return { ports: ports as Map<string, unknown>, ...(waitUntil ? { waitUntil } : {}) };
}

function checkOutput(node: CompiledNode, name: string): string {
  if (node.outputs.includes(name)) return name;
  throw new StepFailure(
    { code: ErrorCode.NODE_CONFIGURATION, message: `Node "${node.id}" sent a result to output "${name}", which it does not have (outputs: ${node.outputs.join(', ')})`, details: { nodeId: node.id } },
    1,
  );
}

/**
 * The run's answer: the output of the last Respond-type node that ran, else of the last node, in
 * execution order, that finished outside any loop body.
 */
function lastOutput(run: Execution): unknown {
  const finished = run.plan.nodes.filter((node) => node.loop === null && run.states.get(node.id)?.status === 'succeeded');
  const answer = finished.filter((node) => node.node.definition.respond).at(-1) ?? finished.at(-1);
  return answer ? run.values[answer.id] : undefined;
}

function isLive(run: Execution, from: string, output: string): boolean {
  const state = run.states.get(from);
  return state !== undefined && (state.status === 'succeeded' || (state.status === 'failed' && !state.blocking)) && state.ports.has(output);
}

/** The node is in the body of `loopId`, directly or inside a loop nested in it. */
function isInside(plan: CompiledWorkflow, node: CompiledNode, loopId: string): boolean {
  for (let loop = node.loop; loop !== null; loop = plan.byId.get(loop)!.loop) if (loop === loopId) return true;
  return false;
}

function outermostLoop(plan: CompiledWorkflow, node: CompiledNode): string {
  let loop = node.loop!;
  while (plan.byId.get(loop)!.loop !== null) loop = plan.byId.get(loop)!.loop!;
  return loop;
}

/** Follows `parent` except when the process stops: the node it guards then finishes first. Dispose of it when the node is done. */
function unlessShutdown(parent: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const follow = () => {
    if (!(isRunInterrupt(parent.reason) && parent.reason.reason === 'shutdown')) controller.abort(parent.reason);
  };
  if (parent.aborted) follow();
  else parent.addEventListener('abort', follow, { once: true });
  return { signal: controller.signal, dispose: () => parent.removeEventListener('abort', follow) };
}

/** The engine copies in only the names a source mentions, and `nodes` and `variables` (frozen) as JSON made once. */
function scopeFor(
  binding: { runMode: 'input'; input: unknown; loop?: LoopState } | { runMode: 'item'; item: unknown },
  variables: Readonly<Record<string, VariableValue>>,
  nodes: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  if (binding.runMode === 'item') return { item: binding.item ?? null, variables, nodes };
  return { input: binding.input ?? null, variables, nodes, ...(binding.loop ? { loop: binding.loop } : {}) };
}

/**
 * Expression results are JSON values; parameters are typed by their class. A string parameter
 * given an object (headers, body) receives its JSON text, as the HTTP Request node expects.
 */
function coerce(value: unknown, type: ExpressionParameter['type']): unknown {
  if (value === null || value === undefined) return undefined;
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'number':
    case 'integer':
      return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    default:
      return value;
  }
}

/** Parameter values produced at run time that the node's parameter class refuses: a configuration error. */
function invalidParams(node: CompiledNode, problems: FieldError[], redactor: Redactor, when: string): StepFailure {
  const fields = problems.map((p) => ({ ...p, reason: redactor.string(p.reason) }));
  return new StepFailure(
    {
      code: ErrorCode.NODE_CONFIGURATION,
      message: `Parameters of node "${node.id}" are invalid ${when}: ${fields.map((f) => `${f.field} ${f.reason}`).join('; ')}`,
      details: { nodeId: node.id, fields },
    },
    0,
  );
}

function pick(values: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((name) => [name, values[name]]));
}

function expressionFailure(node: CompiledNode, expression: ExpressionParameter, error: unknown, redactor: Redactor): StepFailure {
  const reason = isAppError(error)
    ? String((error.details as { reason?: unknown } | undefined)?.reason ?? error.message)
    : error instanceof Error
      ? error.message
      : String(error);
  const safeReason = redactor.string(reason);
  return new StepFailure(
    {
      code: ErrorCode.EXPRESSION_FAILED,
      message: `Expression of parameter "${expression.name}" in node "${node.id}" failed: ${safeReason}`,
      details: { nodeId: node.id, parameter: expression.name, expression: redactor.string(expression.source), reason: safeReason },
    },
    0,
  );
}

function classify(error: unknown): { error: StepError; retryable: boolean } {
  if (error instanceof StepFailure) return { error: error.error, retryable: false };
  const failure = nodeFailure(error);
  if (failure) {
    return { error: { code: failure.code, message: failure.message, ...(failure.details !== undefined ? { details: failure.details } : {}) }, retryable: failure.retryable };
  }
  // A bug or an unexpected failure inside the node: trying again is cheap and sometimes helps.
  const message = error instanceof Error ? error.message : String(error);
  return { error: { code: ErrorCode.INTERNAL, message: message || 'The node failed without a message' }, retryable: true };
}

function redactError(error: StepError, redactor: Redactor): StepError {
  if (!redactor.active) return error;
  return { ...error, message: redactor.string(error.message), ...(error.details !== undefined ? { details: redactor.value(error.details) } : {}) };
}

function interruptOf(signal: AbortSignal): RunInterrupt | null {
  return signal.aborted && isRunInterrupt(signal.reason) ? signal.reason : null;
}

function baseStep(node: CompiledNode): Pick<StepRecord, 'nodeId' | 'position' | 'type' | 'version'> {
  return { nodeId: node.id, position: node.position, type: node.node.definition.type, version: node.node.definition.version };
}

/** Attempts are unknown here (the interrupt cut the retries short); at least one try had begun. */
function interruptedStep(node: CompiledNode, startedAt: Date, interrupt: RunInterrupt): StepRecord {
  const attempts = 1;
  const status = interrupt.reason === 'timeout' ? 'failed' : 'canceled';
  const code = interrupt.reason === 'timeout' ? ErrorCode.TIMEOUT : ErrorCode.CANCELED;
  return { ...baseStep(node), status, attempts, startedAt, finishedAt: new Date(), error: { code, message: interrupt.message } };
}

/** A node's input or output as its record keeps it: secrets masked, size capped. */
function recordedValue(run: Execution, value: unknown): unknown {
  return recordable(run.request.redactor.value(value));
}

/** Keeps the run record bounded; the full output still went to the successors. */
export function recordable(output: unknown): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch (error) {
    return { notRecorded: true, reason: `output is not JSON-serialisable: ${(error as Error).message}` };
  }
  if (json === undefined) return null;
  if (json.length > MAX_RECORDED_OUTPUT_CHARS) return { notRecorded: true, reason: `output of ${json.length} characters exceeds the record limit of ${MAX_RECORDED_OUTPUT_CHARS}` };
  return output;
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** `ctx.logger`: one child logger per node, created on first use, every line masked. */
class ScopedNodeLogger implements NodeLogger {
  private child?: Logger;

  constructor(
    private readonly root: Logger,
    private readonly request: RunRequest,
    private readonly nodeId: string,
  ) {}

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.write('error', message, fields);
  }

  private write(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
    this.child ??= this.root.child({ runId: this.request.runId, workflowId: this.request.workflowId, nodeId: this.nodeId });
    if (!this.child.isLevelEnabled(level)) return;
    const redactor = this.request.redactor;
    this.child[level]({ fields: fields ? redactor.value(fields) : undefined }, redactor.string(String(message)));
  }
}
