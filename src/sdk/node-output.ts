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
  /** What the node outputs when `until` comes: a plain value (its first output) or a RoutedOutput. */
  readonly output: unknown;
  /**
   * Set by `waitForDecision`: a person may end the wait before `until` with a decision (an
   * approval), and meanwhile the step's record shows `pending` rather than `output`.
   */
  readonly decision?: { readonly pending: unknown };
}

/** Units a node may count a pause in (Wait's amount, an approval's timeout), in milliseconds. */
export const DURATION_UNITS = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;
/** A run pauses a year at the most (a Wait node, an approval). */
export const MAX_PAUSE_MS = 366 * DURATION_UNITS.days;

/**
 * Pauses the run until `until` without holding a worker: the run is stored as `waiting` and
 * picked up again by any worker when the time comes (a restart in between loses nothing). The node
 * then counts as finished with `output` as its output.
 */
export function waitUntil(until: Date, output: unknown): WaitRequest {
  if (!(until instanceof Date) || Number.isNaN(until.getTime())) throw new TypeError('waitUntil() needs a valid Date');
  return Object.freeze({ [WAIT]: true as const, until, output });
}

/**
 * Pauses the run until a person decides (through the service's approval doors) or `until` comes,
 * whichever is first, without holding a worker. Meanwhile the step's record shows `pending` (e.g.
 * the link to decide with); when `until` comes first the node outputs `onTimeout` (a plain value
 * or a RoutedOutput). A decision replaces that output with the one the decision makes. Only at a
 * run's top level: inside a loop's body or a sub-workflow run the node fails.
 */
export function waitForDecision(until: Date, pending: unknown, onTimeout: unknown): WaitRequest {
  if (!(until instanceof Date) || Number.isNaN(until.getTime())) throw new TypeError('waitForDecision() needs a valid Date');
  return Object.freeze({ [WAIT]: true as const, until, output: onTimeout, decision: Object.freeze({ pending }) });
}

export function isWaitRequest(value: unknown): value is WaitRequest {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[WAIT] === true;
}
