import { ErrorCode } from '../../common/app-error';
import type { StepError } from '../../domain/step.model';
import { nodeFailure } from '../node-failure';
import type { Redactor } from '../redactor';
import { isRunInterrupt, RunInterrupt } from '../run-interrupt';

/** A node's failure as its step records it, with the tries it took; never tried again. */
export class StepFailure extends Error {
  constructor(
    readonly error: StepError,
    readonly attempts: number,
  ) {
    super(error.message);
  }
}

/** What a failure means for the step, and whether trying again may help. */
export function classify(error: unknown): { error: StepError; retryable: boolean } {
  if (error instanceof StepFailure) return { error: error.error, retryable: false };
  const failure = nodeFailure(error);
  if (failure) {
    return {
      error: { code: failure.code, message: failure.message, ...(failure.details !== undefined ? { details: failure.details } : {}) },
      retryable: failure.retryable,
    };
  }
  // A bug or an unexpected failure inside the node: trying again is cheap and sometimes helps.
  const message = error instanceof Error ? error.message : String(error);
  return { error: { code: ErrorCode.INTERNAL, message: message || 'The node failed without a message' }, retryable: true };
}

export function redactError(error: StepError, redactor: Redactor): StepError {
  if (!redactor.active) return error;
  return {
    ...error,
    message: redactor.string(error.message),
    ...(error.details !== undefined ? { details: redactor.value(error.details) } : {}),
  };
}

export function interruptOf(signal: AbortSignal): RunInterrupt | null {
  return signal.aborted && isRunInterrupt(signal.reason) ? signal.reason : null;
}

export function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}
