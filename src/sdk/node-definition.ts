import type { NodeContext, RunMode } from './node-context';

/** A parameter class: class-validator decorators for validation, `@Parameter()` for documentation. */
export type ParametersClass<P extends object> = new () => P;

/**
 * What a plugin's `index.ts` default-exports: a plain object, no class and no `this`. The
 * parameter class is the single source of the parameters' type, validation and JSON Schema.
 *
 * A workflow sets each parameter in one of three modes: fixed (the value as written), expression
 * (evaluated in the sandbox before each execution) or AI Decide (chosen by the configured language
 * model from the node's description, its `instructions` parameter when it has one, its input and
 * the parameter's JSON Schema). Whatever the mode, `execute` receives values validated against the
 * parameter class, so a node never needs to know how a value was produced.
 */
export interface NodeDefinition<P extends object = object> {
  /** Stable kebab-case name, e.g. `http-request`. */
  readonly type: string;
  /** Positive integer; a workflow pins the version it was built with. */
  readonly version: number;
  readonly displayName: string;
  readonly description: string;
  readonly parameters: ParametersClass<P>;
  readonly defaultRunMode: RunMode;
  /** A trigger starts the run: a workflow has exactly one, and it receives the run's input. */
  readonly trigger?: boolean;
  /** Returns the node's output (JSON-serialisable); throw a Node*Error to fail. */
  execute(ctx: NodeContext<P>): unknown;
}

/**
 * Identity at runtime; for the compiler it ties `ctx.params` to the parameter class, so a node
 * never writes a second interface for its parameters.
 */
export function defineNode<P extends object>(definition: NodeDefinition<P>): NodeDefinition<P> {
  return definition;
}
