/**
 * How a node with several outputs (IF, Switch, Filter, Loop) says where its result goes, and how a
 * node asks the run to wait. Recognised by a `Symbol.for` brand rather than `instanceof`, because a
 * plugin loaded from PLUGIN_PATHS may carry its own copy of this file.
 */
const ROUTED = Symbol.for('workflow-service.routed-output');
const WAIT = Symbol.for('workflow-service.wait');

/** A result sent to some of the node's outputs; the others produce nothing for it. */
export interface RoutedOutput {
  readonly [ROUTED]: true;
  /** Value per output name. */
  readonly outputs: Readonly<Record<string, unknown>>;
}

/**
 * Sends `value` to the output `name` only. In run mode `item` each item's result is routed on its
 * own, and an output's value is the array of what was sent to it, in item order; an output that
 * received nothing produces nothing, and the nodes reachable only through it are skipped.
 */
export function toOutput(name: string, value: unknown): RoutedOutput {
  return toOutputs({ [name]: value });
}

/** Sends a value to each named output; `toOutputs({})` produces nothing at all. */
export function toOutputs(values: Record<string, unknown>): RoutedOutput {
  return Object.freeze({ [ROUTED]: true as const, outputs: Object.freeze({ ...values }) });
}

export function isRoutedOutput(value: unknown): value is RoutedOutput {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ROUTED] === true;
}

/** The run is to pause until `until`, then go on with `output` as this node's output. */
export interface WaitRequest {
  readonly [WAIT]: true;
  readonly until: Date;
  readonly output: unknown;
}

/**
 * Pauses the run until `until` without holding a worker: the run is stored as `waiting` and
 * picked up again by any worker when the time comes (a restart in between loses nothing). The node
 * then counts as finished with `output` as its output.
 */
export function waitUntil(until: Date, output: unknown): WaitRequest {
  if (!(until instanceof Date) || Number.isNaN(until.getTime())) throw new TypeError('waitUntil() needs a valid Date');
  return Object.freeze({ [WAIT]: true as const, until, output });
}

export function isWaitRequest(value: unknown): value is WaitRequest {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[WAIT] === true;
}
