import type { Logger } from 'pino';
import type { LanguageModels, VariableValue, WorkflowsFacade } from '../../sdk';
import type { RunError, StepRecord, SubStep } from '../../domain/step.model';
import type { ParameterDecider } from '../../domain/parameter-decider.port';
import type { NodeCollectionsProvider } from '../node-collections.port';
import type { OutboundFetch } from '../node-http-client';
import type { NodeCredentials } from '../node-credentials.port';
import type { Redactor } from '../redactor';
import type { ConversationStore } from '../../domain/conversation-store.port';
import type { JobShare } from '../../domain/job-queue.port';

/** The expression engine as the executor uses it (src/engine/expressions implements it); `share`: the run's (runShare). */
export interface ExpressionEvaluator {
  evaluate(source: string, scope: Record<string, unknown>, options?: { signal?: AbortSignal; share?: JobShare }): Promise<unknown>;
}

/** `ctx.sandbox` as the deployment gives it: each run's nodes reach it with the run's share (runShare). */
export interface RunSandbox {
  run(code: string, scope: Record<string, unknown>, signal: AbortSignal, about?: { nodeId?: string; share?: JobShare }): Promise<unknown>;
}

export interface ExecutorDependencies {
  expressions: ExpressionEvaluator;
  fetcher: OutboundFetch;
  collections: NodeCollectionsProvider;
  /** `ctx.models`: the configured language model; absent when none is. */
  models?: LanguageModels;
  /** `ctx.sandbox`: JavaScript in the isolate pool (the Code node). */
  sandbox?: RunSandbox;
  /** Chooses AI Decide parameters; absent when no language model is configured. */
  decider?: ParameterDecider;
  /** The credentials nodes name (`credential` on ctx.http and chat endpoints); absent: none can be used. */
  credentials?: NodeCredentials;
  /** Signs the links of approval nodes (`ctx.approvals`); absent: an approval node fails. */
  approvalLinks?: ApprovalLinkSigner;
  /** `ctx.memory`: conversations kept between runs; absent: nodes are told it is unavailable. */
  conversations?: ConversationStore;
  logger: Logger;
  runTimeoutMs: number;
}

/** Makes the signed one-time link that decides one approval node of one run. */
export interface ApprovalLinkSigner {
  url(claim: { runId: string; nodeId: string; expiresAt: Date }): string;
}

/** Seals a node's outputs for the store (they may hold secrets) and opens them again. */
export interface StateSealer {
  seal(value: unknown): string;
  open(sealed: string): unknown;
}

export interface RunRequest {
  runId: string;
  workflowId: string;
  /** A test run executes the draft: its credential uses are recorded as tests. */
  runType?: 'production' | 'test';
  /** Whose rights `ctx.collections` acts with. */
  actingUserId: string;
  input: unknown;
  /** Decrypted; never stored as they are. */
  variables: Readonly<Record<string, VariableValue>>;
  /**
   * What records, errors and logs are masked with. Grows during the run: a credential's values
   * join it the moment a node injects them, before they are sent; read it again after the run.
   */
  redactor: Redactor;
  /** Aborted with a RunInterrupt on cancel or shutdown. */
  signal?: AbortSignal;
  /**
   * Aborts `signal`, when the caller made its controller for this run alone: the run's time limit
   * then aborts it, rather than a signal of the executor's own that follows it (making an
   * AbortSignal costs about 5 µs of CPU on Node 20, a share of a short run).
   */
  abort?: (reason: unknown) => void;
  /** Steps an earlier attempt of the run left (or copied from the run it retries): what to continue from. */
  previous?: readonly StepRecord[];
  /** Opens the sealed state of `previous` steps. */
  sealer?: StateSealer;
  /** `ctx.workflows` of a node: sub-workflow runs linked to this run and that node. */
  workflows?: (nodeId: string) => WorkflowsFacade;
  /** Waits hold the worker instead of pausing the run (a sub-workflow, whose parent waits for it). */
  holdWaits?: boolean;
  /** A test of one node: it runs on `input` (the run's input), then with `andAfter` what follows; nothing else runs. */
  test?: { nodeId: string; andAfter: boolean };
  now?: () => Date;
  /** Told each sub-step a node records (masked) and each token of an answer it streams, as they happen. */
  progress?: (event: RunProgress) => void;
}

/** What a running node reports before it ends (RunEvents carries it to a chat stream). */
export type RunProgress = { nodeId: string; type: 'substep'; subStep: SubStep } | { nodeId: string; type: 'token'; text: string };

/** A finished node's whole outputs (by output name), and for a Wait node when the run goes on. */
export interface KeptOutputs {
  ports: Map<string, unknown>;
  until?: Date;
  /**
   * The step's recorded output holds these ports exactly (nothing masked, nothing capped): its
   * `state` then says so rather than seal a second copy of what is stored in clear beside it.
   */
  inRecord?: 'single' | 'ports';
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
  /**
   * Before any node starts: resolves once what a resumed run needs of the nodes finished so far
   * (their records and kept outputs) is stored, so a node that finished is never run again or
   * taken for one cut short. Fails (and the node does not start) when it cannot be stored.
   */
  starting?(): Promise<void>;
}

export interface RunOutcome {
  /**
   * `interrupted`: the process is stopping; the run is not over and must go back to the queue.
   * `waiting`: a Wait node paused the run until `resumeAt`.
   */
  status: 'succeeded' | 'failed' | 'canceled' | 'interrupted' | 'waiting';
  error: RunError | null;
  steps: StepRecord[];
  /**
   * A succeeded run's answer, unmasked (see runOutput): a Respond node's output, else its end
   * node's, or its end nodes' keyed by id. Absent when the run did not succeed.
   */
  output?: unknown;
  /**
   * The JSON text of `output`, within a step's record limit, when a step's record made it of that
   * very value (nothing masked in it): whoever stores the output need not serialise it again.
   */
  outputText?: string;
  resumeAt?: Date;
}
