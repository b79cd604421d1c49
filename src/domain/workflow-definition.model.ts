import type { RunMode } from '../sdk';

/** Node ids appear in expressions as `nodes.<id>` and in URLs of the builder: keep them plain. */
export const NODE_ID = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
/** Variables are read as `variables.<name>`, so a name is a JavaScript identifier. */
export const VARIABLE_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/**
 * How a parameter's value is produced for each execution: as written (`fixed`), evaluated in the
 * expression sandbox (`expression`), or chosen by the configured language model (`ai`, AI Decide).
 * Every parameter of every node takes all three.
 */
export type ParameterMode = 'fixed' | 'expression' | 'ai';
export const PARAMETER_MODES: readonly ParameterMode[] = ['fixed', 'expression', 'ai'];

export type VariableType = 'string' | 'number' | 'boolean' | 'secret';
export const VARIABLE_TYPES: readonly VariableType[] = ['string', 'number', 'boolean', 'secret'];

/** The older spelling of retryOnFail with maxTries and waitBetweenTries, and exponential backoff. */
export interface RetryPolicy {
  /** Tries including the first; 1 means no retry. */
  maxAttempts: number;
  /** Wait before the second try; doubles for each further try. */
  backoffMs?: number;
}

/** What a node's failure does: stop its branch (and fail the run), put the error in its output, or send the failed items to its `error` output. */
export type OnError = 'stop' | 'continue' | 'errorOutput';
export const ON_ERROR: readonly OnError[] = ['stop', 'continue', 'errorOutput'];

/** How the wait between tries grows: the same each time, or doubling. */
export type Backoff = 'fixed' | 'exponential';
export const BACKOFFS: readonly Backoff[] = ['fixed', 'exponential'];

export interface WorkflowNodeSpec {
  /** Unique in the workflow; how edges and expressions (`nodes.<id>`) name the node. */
  id: string;
  name?: string;
  type: string;
  /** Omitted means the newest loaded version; stored definitions always carry it. */
  version?: number;
  /** Fixed values, expression sources, or for `ai` an optional hint to the model. */
  parameters: Record<string, unknown>;
  /** Omitted names are `fixed`. */
  parameterMode?: Record<string, ParameterMode>;
  /** Defaults to the node type's `defaultRunMode`. */
  runMode?: RunMode;
  /** Defaults to `stop`. */
  onError?: OnError;
  /** The older spelling of `onError: 'continue'` (true) or `'stop'` (false). */
  continueOnError?: boolean;
  /** Try again after a failure that may pass; maxTries, waitBetweenTries and backoff apply only then. */
  retryOnFail?: boolean;
  /** Tries including the first (default 3). */
  maxTries?: number;
  /** Wait before the second try, in ms (default 1000). */
  waitBetweenTries?: number;
  /** Default `fixed`. */
  backoff?: Backoff;
  retry?: RetryPolicy;
  /** Limit of one try of the node (of one item, in run mode `item`). */
  timeoutMs?: number;
  /**
   * Turned off without being removed (n8n's "deactivate"): it does not run, and what it receives
   * goes on unchanged from its first output; its step is recorded as skipped. A trigger or a loop
   * cannot be disabled.
   */
  disabled?: boolean;
  position?: { x: number; y: number };
}

export interface WorkflowEdge {
  from: string;
  to: string;
  /** Which output of `from` the edge takes; omitted means its first (for most nodes, `main`). */
  output?: string;
}

/**
 * A workflow variable as stored: a secret's `value` is its ciphertext (see SecretCipher), the
 * others are plain JSON values of their type.
 */
export interface WorkflowVariable {
  name: string;
  type: VariableType;
  value: string | number | boolean;
}

export interface WorkflowDefinition {
  nodes: WorkflowNodeSpec[];
  edges: WorkflowEdge[];
  variables: WorkflowVariable[];
  /**
   * Inputs pinned on nodes of the draft, by node id, for testing one node on data of one's choice.
   * Kept with the draft only: publishing leaves them out, and no run but a node test reads them.
   */
  pinnedData?: Record<string, unknown>;
  /** Sticky notes on the canvas: text for the people who read the workflow; they never run. */
  notes?: StickyNote[];
}

/** A note drawn on the canvas beside the nodes. */
export interface StickyNote {
  id: string;
  text: string;
  position: { x: number; y: number };
  width: number;
  height: number;
}
