// What a node's failure does, compiled from its settings: how often it is tried (retryOnFail,
// maxTries, waitBetweenTries, backoff, or the older `retry`) and what happens once it has failed
// (onError, or the older continueOnError). Both spellings are accepted; given together they must agree.
import type { Backoff, OnError, WorkflowNodeSpec } from '../../domain/workflow-definition.model';

/** How often a node is tried, and how long it waits before each try after the first. */
export interface TryPolicy {
  /** Tries including the first; 1 means no retry. */
  readonly maxTries: number;
  /** Wait before the second try. */
  readonly waitMs: number;
  /** `exponential`: the wait doubles for each further try. */
  readonly backoff: Backoff;
}

/** The output a node with onError `errorOutput` sends what failed to. */
export const ERROR_OUTPUT = 'error';
export const DEFAULT_MAX_TRIES = 3;
export const DEFAULT_WAIT_BETWEEN_TRIES_MS = 1000;

const ONCE: TryPolicy = Object.freeze({ maxTries: 1, waitMs: DEFAULT_WAIT_BETWEEN_TRIES_MS, backoff: 'fixed' });
const NEWER_RETRY_FIELDS = ['retryOnFail', 'maxTries', 'waitBetweenTries', 'backoff'] as const;

type Problem = (field: string, reason: string) => void;

export function onErrorOf(spec: WorkflowNodeSpec, problem: Problem): OnError {
  const alias: OnError | undefined = spec.continueOnError === undefined ? undefined : spec.continueOnError ? 'continue' : 'stop';
  if (spec.onError !== undefined && alias !== undefined && spec.onError !== alias) {
    problem(
      'onError',
      `"${spec.onError}" contradicts continueOnError: ${spec.continueOnError}, the older spelling of onError "${alias}": give one of them`,
    );
  }
  return spec.onError ?? alias ?? 'stop';
}

export function tryPolicyOf(spec: WorkflowNodeSpec, problem: Problem): TryPolicy {
  const newer: TryPolicy = spec.retryOnFail
    ? {
        maxTries: spec.maxTries ?? DEFAULT_MAX_TRIES,
        waitMs: spec.waitBetweenTries ?? DEFAULT_WAIT_BETWEEN_TRIES_MS,
        backoff: spec.backoff ?? 'fixed',
      }
    : ONCE;
  if (!spec.retry) return newer;
  const older: TryPolicy = {
    maxTries: spec.retry.maxAttempts,
    waitMs: spec.retry.backoffMs ?? DEFAULT_WAIT_BETWEEN_TRIES_MS,
    backoff: 'exponential',
  };
  if (!NEWER_RETRY_FIELDS.some((field) => spec[field] !== undefined)) return older;
  const clash = (field: string, given: unknown, olderValue: string) =>
    problem(
      field,
      `${JSON.stringify(given)} contradicts ${olderValue}: retry is the older spelling of retryOnFail with maxTries, waitBetweenTries and backoff "exponential"; give one of them`,
    );
  if (newer.maxTries !== older.maxTries) {
    if (spec.retryOnFail) clash('maxTries', newer.maxTries, `retry.maxAttempts ${older.maxTries}`);
    else clash('retryOnFail', spec.retryOnFail ?? false, `retry.maxAttempts ${older.maxTries}`);
  } else if (older.maxTries > 1 && newer.waitMs !== older.waitMs) {
    clash('waitBetweenTries', newer.waitMs, `retry.backoffMs ${older.waitMs}`);
  } else if (older.maxTries > 1 && newer.backoff !== older.backoff) {
    clash('backoff', newer.backoff, 'retry, whose backoff is exponential');
  }
  return older;
}

/** The node's outputs with `error` added for onError `errorOutput`; null (and a problem) when it already has one of that name. */
export function withErrorOutput(outputs: readonly string[], onError: OnError, type: string, problem: Problem): readonly string[] | null {
  if (onError !== 'errorOutput') return outputs;
  if (outputs.includes(ERROR_OUTPUT)) {
    problem(
      'onError',
      `${type} has an output named "${ERROR_OUTPUT}" of its own, so its failures cannot be sent to one: use onError "continue" or "stop"`,
    );
    return null;
  }
  return [...outputs, ERROR_OUTPUT];
}
