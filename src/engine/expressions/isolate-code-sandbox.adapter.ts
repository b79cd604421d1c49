import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import { CodeSandbox, NodeConfigurationError } from '../../sdk';
import { ExpressionEngine } from './expression-engine';

/**
 * `ctx.sandbox` of nodes (the Code node): JavaScript function bodies in the expression engine's
 * isolates, with its limits. What the code does wrong (syntax, an exception, a result that is not
 * JSON, time or memory exhausted) is the workflow's to fix: a configuration error, never retried.
 */
export class IsolateCodeSandbox implements CodeSandbox {
  constructor(private readonly engine: ExpressionEngine) {}

  async run(code: string, scope: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    try {
      return await this.engine.runCode(code, scope, { signal });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (isAppError(error) && error.code === ErrorCode.EXPRESSION_FAILED) {
        const reason = String((error.details as { reason?: unknown } | undefined)?.reason ?? error.message);
        throw new NodeConfigurationError(`The code failed: ${reason}`, { details: { reason } });
      }
      throw error instanceof AppError ? error : new AppError(ErrorCode.INTERNAL, 'The code sandbox failed', { cause: error });
    }
  }
}
