import type {
  ApprovalsFacade,
  CodeSandbox,
  ConversationMemory,
  LoopState,
  NodeContext,
  NodeInput,
  NodeLogger,
  NodeProgress,
  WorkflowsFacade,
} from '../../sdk';
import type { RunError, StepError, StepRecord, SubStep } from '../../domain/step.model';
import type { CompiledNode, CompiledWorkflow } from '../compiler/compiled-plan';
import type { RunInterrupt } from '../run-interrupt';
import type { ResolvedCredential } from '../node-credentials.port';
import type { NodeHttpRun } from '../node-http-client';
import type { Redactor } from '../redactor';
import type { RunRequest, StepListener } from './run-contract';
import type { Recorded } from './step-records';

/** One run's execution: the plan, what each node produced, and where records go. */
export interface Execution {
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
  /** The credentials nodes used so far, resolved once per run for its user. */
  credentials: Map<string, Promise<ResolvedCredential>>;
  /**
   * The values those credentials put into requests: masked in what a node outputs, not only in
   * records, so a server that echoes one back hands nothing usable to the nodes after it.
   */
  credentialMasks: Redactor;
  /** What nodes reported doing inside themselves (ctx.progress), masked, until their step record takes them. */
  subSteps: Map<string, SubStep[]>;
  /**
   * The run's signal without its shutdown, for the nodes that must not run twice: made at the
   * first of them and shared by all (it follows the run's signal alone), disposed with the run.
   */
  shielded?: { signal: AbortSignal; dispose: () => void };
  /**
   * The value recorded last (a node's output) and what recording it made, until a node's code runs
   * again: the next node's input is mostly that very value, and nothing could have changed it since.
   */
  lastRecorded?: { value: unknown; redactor: Redactor; recorded: Recorded };
  /** What every node try's ctx.http needs of the run (httpRunOf in node-context.ts), made at its first try. */
  httpRun?: NodeHttpRun;
  /** Every node try's `ctx.mask`, made at its first try: it masks with the run's masks as they stand when called. */
  mask?: <T>(value: T) => T;
  /** Every node's `ctx.collections` (the run's user's) and `ctx.sandbox` (in the run's fair turn), made at its first node. */
  collections?: NodeShared['collections'];
  sandbox?: CodeSandbox;
}

/** Where a node stands in this run. */
export interface NodeState {
  status: 'succeeded' | 'failed' | 'skipped' | 'canceled';
  ports: Map<string, unknown>;
  /** The node's output as expressions (`nodes.<id>`) and records see it. */
  value: unknown;
  /** Failed with onError `stop` (or stopped): nodes after it do not run. */
  blocking: boolean;
}

/** What a node's execution produced, routed to its outputs. */
export interface NodeResult {
  /** Live outputs: an output that received nothing is absent. */
  ports: Map<string, unknown>;
  attempts: number;
  /** Set when the node failed but its onError let the run go on (the error is in its output, or its `error` output). */
  error: StepError | null;
  /** A Wait node asked the run to pause until then. */
  waitUntil?: Date;
  /** An approval waits for a decision (or `waitUntil`): its record shows `pending` meanwhile. */
  decision?: { pending: unknown };
}

/** What one execution of a node is bound to: the whole input (with the loop's state, for a loop node), or one item. */
export type Binding = { runMode: 'input'; input: unknown; loop?: LoopState } | { runMode: 'item'; item: unknown; itemIndex: number };

/** What every item and try of one node's execution shares. */
export interface NodeShared {
  nodes: Readonly<Record<string, unknown>>;
  inputs: readonly NodeInput[];
  collections: NodeContext<object>['collections'];
  logger: NodeLogger;
  workflows: WorkflowsFacade;
  approvals: ApprovalsFacade;
  progress: NodeProgress;
  memory: ConversationMemory;
  /** `ctx.sandbox`, its evaluations waiting in the run's fair turn. */
  sandbox: CodeSandbox;
}

/** One execution of a node, shared by its items and tries. */
export interface NodeGuard {
  node: CompiledNode;
  run: Execution;
  startedAt: Date;
  /** The record saying it started was stored (a node that must not run twice). */
  marked: boolean;
  /** The nodes finished before it were stored (see StepListener.starting), or are going out with its `started` record. */
  settled?: boolean;
}

/** Stops the run where it is: the run reached a Wait node (or resumed at one whose time has not come). */
export class Suspension extends Error {
  constructor(readonly resumeAt: Date) {
    super('the run waits');
  }
}
