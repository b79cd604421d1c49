import { ErrorCode } from '../common/app-error';
import type { CompiledWorkflow } from './compiler/compiled-plan';
import { Execution, Suspension } from './executor/execution';
import { GraphWalker } from './executor/graph-walker';
import { runOutput } from './executor/graph-routing';
import { NodeRunner } from './executor/node-runner';
import { ParameterResolver } from './executor/parameter-resolver';
import type { ExecutorDependencies, RunOutcome, RunRequest, StepListener } from './executor/run-contract';
import { narrowToTest } from './executor/node-test';
import { restore } from './executor/run-resume';
import { Redactor } from './redactor';
import { RunInterrupt } from './run-interrupt';
import { childSignal, timeLimit } from './signals';

export type {
  ExecutorDependencies,
  ExpressionEvaluator,
  KeptOutputs,
  RunOutcome,
  RunRequest,
  StateSealer,
  StepListener,
} from './executor/run-contract';
export { MAX_RECORDED_OUTPUT_CHARS, MAX_STATE_CHARS, recordable, boundOutput, sealOutputs } from './executor/step-records';

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
 *
 * The parts, in src/engine/executor/: the walk over the graph (graph-walker), what flows along
 * edges (graph-routing), loops (loop-runner, loop-records), one node's execution (node-runner,
 * run-modes, node-context), its parameters (parameter-resolver), its records (step-records,
 * step-failure) and resuming (run-resume).
 */
export class WorkflowExecutor {
  private readonly walker: GraphWalker;

  constructor(private readonly deps: ExecutorDependencies) {
    this.walker = new GraphWalker(new NodeRunner(deps, new ParameterResolver(deps)));
  }

  async run(plan: CompiledWorkflow, request: RunRequest, listener: StepListener): Promise<RunOutcome> {
    const onTimeout = () => new RunInterrupt('timeout', `The run exceeded its time limit of ${this.deps.runTimeoutMs} ms`);
    const runLimit =
      request.signal && request.abort
        ? timeLimit(request.signal, request.abort, this.deps.runTimeoutMs, onTimeout)
        : childSignal(request.signal ?? new AbortController().signal, this.deps.runTimeoutMs, onTimeout);
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
      credentials: new Map(),
      credentialMasks: Redactor.NONE,
      subSteps: new Map(),
    };
    try {
      if (request.test) narrowToTest(run, plan, request.test);
      await restore(run);
      await this.walker.runNodes(
        run,
        plan.nodes.filter((n) => n.loop === null),
        null,
      );
    } catch (error) {
      if (!(error instanceof Suspension)) throw error;
      return { status: 'waiting', error: null, steps: run.steps, resumeAt: error.resumeAt };
    } finally {
      run.shielded?.dispose();
      runLimit.dispose();
    }
    if (run.stoppedBy?.reason === 'shutdown') return { status: 'interrupted', error: null, steps: run.steps };
    // A run that did not succeed has no answer: part of one would pass for the whole.
    if (run.stoppedBy?.reason === 'canceled')
      return { status: 'canceled', error: { code: ErrorCode.CANCELED, message: 'The run was canceled' }, steps: run.steps };
    if (run.failure) return { status: 'failed', error: run.failure, steps: run.steps };
    // A test of one node alone answers with that node's output: what follows it was left out on purpose.
    const output = request.test && !request.test.andAfter ? run.values[request.test.nodeId] : runOutput(run);
    const outcome: RunOutcome = { status: 'succeeded', error: null, steps: run.steps, output };
    // Mostly the last step's output, whose record made its text (no node ran since, so it still holds).
    const recorded = run.lastRecorded?.recorded.json;
    if (recorded && recorded.of === output && output !== undefined) outcome.outputText = recorded.text;
    return outcome;
  }
}
