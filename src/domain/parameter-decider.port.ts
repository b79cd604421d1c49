import type { FieldError } from '../common/app-error';

/** One parameter the model is asked to choose. */
export interface DecidedParameter {
  name: string;
  /** The parameter's JSON Schema, from the node's parameter class. */
  schema: Record<string, unknown>;
  /** What the workflow author wrote for this parameter in AI Decide mode; may be ''. */
  hint: string;
  /** False when the parameter may be left out (the model then answers null). */
  required: boolean;
}

/** Everything the model is told, already stripped of secret values by the executor. */
export interface DecisionRequest {
  node: { id: string; type: string; displayName: string; description: string };
  /** The node's `instructions` parameter after rendering; '' when it has none. */
  instructions: string;
  /** The node's `input` (run mode input) or `item` (run mode item). */
  input: unknown;
  parameters: readonly DecidedParameter[];
  /** The previous answer and why it was refused, so the model can correct itself. */
  correction?: { answer: unknown; problems: readonly FieldError[] };
}

/**
 * Chooses parameter values for AI Decide. The answer is parsed JSON but not yet trusted: the
 * executor coerces and validates it against the parameter class like any other value.
 */
export abstract class ParameterDecider {
  /**
   * @returns the model's answer, normally an object of values by parameter name
   * @throws AppError UPSTREAM_FAILED (retryable when trying later may help), or the signal's reason
   */
  abstract decide(request: DecisionRequest, signal: AbortSignal): Promise<unknown>;
}
