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
  /**
   * A trigger starts the run: a workflow has exactly one, and it receives the run's input. The
   * object form also lets the service start runs by itself (on a schedule) or offer the workflow
   * as an MCP tool.
   */
  readonly trigger?: boolean | TriggerOptions<P>;
  /**
   * Names of the node's outputs, which edges pick with `output`; default `['main']`. A plain
   * return value goes to the first one; `toOutput()` / `toOutputs()` choose. A function when the
   * outputs depend on parameters (a Switch's cases): those parameters must then be fixed.
   */
  readonly outputs?: readonly string[] | ((params: P) => readonly string[]);
  /**
   * False when running the node twice does harm (it sends a request, adds a file, starts a run):
   * after a worker crash in the middle of it, the run fails at this node with a clear error
   * instead of running it again. A function when it depends on parameters (GET or POST). Default true.
   */
  readonly idempotent?: boolean | ((params: P) => boolean);
  /**
   * A loop node: edges from the nodes of its body back into it are allowed. It is executed once
   * per iteration with `ctx.loop`, and each time sends its result either to its `loop` output (the
   * body runs once more) or to its `done` output (the loop ends).
   */
  readonly loop?: boolean;
  /**
   * The node's output is the workflow's answer to whoever started the run and waits for it (an
   * MCP tool call, a parent workflow, `?wait=`): instead of the output of the run's end node(s),
   * the last such node that ran gives it.
   */
  readonly respond?: boolean;
  /** Returns the node's output (JSON-serialisable), a RoutedOutput or a WaitRequest; throw a Node*Error to fail. */
  execute(ctx: NodeContext<P>): unknown;
}

export interface TriggerOptions<P extends object> {
  /**
   * The service starts a production run at every tick of `cron` (5 or 6 fields, in `timezone`,
   * an IANA name, default UTC), once per tick whatever the number of processes; the run's input is
   * `{ scheduledAt, firedAt }` (ISO 8601).
   */
  schedule?(params: P): { cron: string; timezone?: string };
  /**
   * The published workflow is offered as a tool of the MCP server, with this input schema (a JSON
   * Schema object); a call runs it and answers with its output.
   */
  tool?(params: P): { name?: string; description?: string; inputSchema: Record<string, unknown> };
}

/**
 * Identity at runtime; for the compiler it ties `ctx.params` to the parameter class, so a node
 * never writes a second interface for its parameters.
 */
export function defineNode<P extends object>(definition: NodeDefinition<P>): NodeDefinition<P> {
  return definition;
}
