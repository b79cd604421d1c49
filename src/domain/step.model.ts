import type { NodeSubStep } from '../sdk';

/**
 * What the executor records of each node it runs, and how a failure reads once masked; the run
 * store keeps them as they are.
 *
 * `running`: a node that must not run twice has started and not finished (written before it
 * starts); `waiting`: a Wait node paused the run, its output is kept until the run resumes.
 */
export const STEP_STATUSES = ['running', 'waiting', 'succeeded', 'failed', 'skipped', 'canceled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** A failure as stored: secrets already masked. */
export interface StepError {
  code: string;
  message: string;
  details?: unknown;
}

export interface RunError extends StepError {
  /** The node whose failure ended the run, when one did. */
  nodeId?: string;
}

/** One node of one run. `input` and `output` are masked and size-capped before they get here. */
export interface StepRecord {
  nodeId: string;
  /** The node's place in the execution order, from 0: steps are listed by it. */
  position: number;
  type: string;
  version: number;
  status: StepStatus;
  /** Tries of the node (the most any item needed, in run mode `item`); 0 when it never ran. */
  attempts: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  /**
   * What the node received: the data of its live incoming edges (the run's input for the trigger).
   * Kept because it cannot be told from the other records: a loop's per-iteration data is never
   * recorded, and which outputs fed a node depends on parameters (a Switch's cases).
   */
  input?: unknown;
  output?: unknown;
  error?: StepError | null;
  /** For a node in a loop's body: how many iterations ran it (its output is then one entry per iteration). */
  iterations?: number;
  /** Copied from the run this one retries: the node did not run again. */
  reused?: boolean;
  /**
   * The node's whole outputs, sealed (encrypted like secret variables) because they may hold
   * secrets: what a resumed or retried run continues from. Never shown; dropped when the run succeeds.
   */
  state?: string | null;
  /**
   * What a node did inside itself, in order: an AI agent's model calls and tool calls, with their
   * timing, tokens, arguments and results (masked like input and output).
   */
  subSteps?: SubStep[];
  /**
   * The texts of `input` and `output` as the executor recorded them, for the store that writes the
   * record (stepJson). Each stands for the value it was made of only: a record copied with another
   * `output` has that one serialised. Handed to the store's writer with the record, not kept in the
   * run's outcome (emit): up to a megabyte each, they are not held beside their values for the
   * rest of the run.
   */
  json?: { input?: RecordedJson; output?: RecordedJson };
}

/** One model call or tool call inside a node (an AI agent's loop): what the node reported, masked. */
export type SubStep = NodeSubStep;

/**
 * A recorded `input` or `output` with the JSON text the executor's size check made of it (it
 * serialises the value anyway): a store writing JSON writes this text rather than serialise the
 * value a second time. The text is the value as it was recorded: a node that modifies what it
 * received after its input was recorded does not change the stored record (as it could not when
 * secrets were masked: that records a copy).
 */
export interface RecordedJson {
  /** The value the text was made of: the text stands for this very object only. */
  of: unknown;
  text: string;
}

/** A step's recorded `input` or `output` as a store writes it: the executor's text when made of this very value, null when absent. */
export function stepJson(step: StepRecord, field: 'input' | 'output'): string | null {
  const value = step[field];
  if (value === undefined) return null;
  const recorded = step.json?.[field];
  return recorded !== undefined && recorded.of === value ? recorded.text : JSON.stringify(value);
}
