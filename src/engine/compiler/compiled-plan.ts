import type { FieldError } from '../../common/app-error';
import type { RunMode } from '../../sdk';
import type { OnError } from '../../domain/workflow-definition.model';
import type { DecidedParameter } from '../../domain/parameter-decider.port';
import type { RegisteredNode } from '../node-registry';
import type { ParameterType } from '../parameter-schema';
import type { TryPolicy } from './failure-settings';

/** A problem of a definition; `nodeId` says which node, when it is about one. */
export interface DefinitionProblem extends FieldError {
  nodeId?: string;
  /** For a syntax error in an expression or code parameter: where, 1-based. */
  line?: number;
  column?: number;
}

/** A parameter evaluated for each execution; `type` says how to coerce its result. */
export interface ExpressionParameter {
  name: string;
  source: string;
  type: ParameterType;
}

/** A parameter the language model chooses for each execution (AI Decide); `type` says how to coerce its answer. */
export interface AiParameter extends DecidedParameter {
  type: ParameterType;
}

export interface CompileOptions {
  /** A language model is configured (LLM_URL); without one, a workflow using AI Decide is refused. */
  aiDecide?: boolean;
  /**
   * A trigger that starts runs by itself or is offered as an MCP tool (`schedule`, `tool`) must
   * have fixed parameters: the service reads them when the version is published, before any run,
   * so an expression, a template or AI Decide there is refused rather than silently ignored.
   * Checked where a definition is saved, published or activated; runs of versions published
   * before the rule still compile.
   */
  fixedTriggerParameters?: boolean;
}

/** An edge as the executor follows it: which output of which node feeds this one. */
export interface CompiledEdge {
  readonly from: string;
  readonly output: string;
}

export interface CompiledNode {
  readonly id: string;
  /** Index in the execution order. */
  readonly position: number;
  readonly node: RegisteredNode;
  readonly runMode: RunMode;
  /** What its failure does: `stop` blocks what follows it; `continue` and `errorOutput` let the run go on. */
  readonly onError: OnError;
  readonly tries: TryPolicy;
  readonly timeoutMs: number | null;
  /** The node's output names; a plain return value goes to the first. With onError `errorOutput`, `error` is the last. */
  readonly outputs: readonly string[];
  /** Those of its outputs that an edge takes: a node outside loops that sent nothing to any of them is an end of the run. */
  readonly linkedOutputs: readonly string[];
  /** Incoming edges in definition order, back edges of a loop excluded. */
  readonly incoming: readonly CompiledEdge[];
  /** Ids of the nodes those edges come from, each once, in definition order. */
  readonly predecessors: readonly string[];
  /** For a loop node: the edges from its body that bring each iteration's result back. */
  readonly backEdges: readonly CompiledEdge[];
  /** The innermost loop whose body holds this node; null outside loops. */
  readonly loop: string | null;
  readonly fixed: Readonly<Record<string, unknown>>;
  /** Expressions, and templates of template parameters in fixed mode. */
  readonly expressions: readonly ExpressionParameter[];
  readonly aiParameters: readonly AiParameter[];
  /** Validated and frozen once when every parameter is fixed, shared by every run. */
  readonly staticParams: object | null;
  /** Turned off: it does not run, and its input goes on unchanged from its first output. */
  readonly disabled: boolean;
  /** Whether running the node twice is harmless, given its resolved parameters. */
  readonly idempotent: (params: object) => boolean;
  /** True when that holds whatever the parameters (decidable before running it). */
  readonly alwaysIdempotent: boolean;
}

/** A definition checked against the loaded node types, in execution order. Immutable, so cacheable. */
export interface CompiledWorkflow {
  readonly nodes: readonly CompiledNode[];
  readonly trigger: CompiledNode;
  readonly byId: ReadonlyMap<string, CompiledNode>;
}

/** What a node is before its place in the graph is known. */
export type PreparedNode = Omit<CompiledNode, 'position' | 'incoming' | 'predecessors' | 'backEdges' | 'loop' | 'linkedOutputs'>;
