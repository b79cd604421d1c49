import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import { CodeSandbox } from '../../sdk';
import { ExpressionEngine } from './expression-engine';
import type { JobShare } from '../../domain/job-queue.port';

/** Failures of the code itself or of its limits: the workflow's to fix, never retried. */
const CODE_FAILURES = new Set<ErrorCode>([
  ErrorCode.CODE_ERROR,
  ErrorCode.TIMEOUT,
  ErrorCode.MEMORY_LIMIT,
  ErrorCode.SANDBOX_UNRESPONSIVE,
  ErrorCode.SANDBOX_CRASHED,
]);

/**
 * `ctx.sandbox` of nodes (the Code node): JavaScript function bodies in the expression engine's
 * sandbox processes, with its limits. Each failure keeps the engine's code (CODE_ERROR, TIMEOUT,
 * MEMORY_LIMIT, SANDBOX_UNRESPONSIVE, SANDBOX_CRASHED) and says which node, and where in its code.
 */
export class IsolateCodeSandbox implements CodeSandbox {
  constructor(private readonly engine: ExpressionEngine) {}

  async run(
    code: string,
    scope: Record<string, unknown>,
    signal: AbortSignal,
    about: { nodeId?: string; share?: JobShare } = {},
  ): Promise<unknown> {
    try {
      return await this.engine.runCode(code, scope, { signal, share: about.share });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (isAppError(error) && CODE_FAILURES.has(error.code)) throw located(error, about.nodeId);
      throw error instanceof AppError ? error : new AppError(ErrorCode.INTERNAL, 'The code sandbox failed', { cause: error });
    }
  }
}

function located(error: AppError, nodeId: string | undefined): AppError {
  const details = error.details as { reason: string; line: number | null; column: number | null; path: string | null };
  const whose = nodeId === undefined ? 'The code' : `The code of node "${nodeId}"`;
  const where = details.line === null ? '' : ` (line ${details.line}${details.column === null ? '' : `, column ${details.column}`})`;
  const item = /^result\[(\d+)\]/.exec(details.path ?? '');
  const which = item === null ? '' : ` (item ${item[1]})`;
  return new AppError(error.code, `${whose} failed: ${details.reason}${where}${which}`, {
    details: { ...(nodeId === undefined ? {} : { nodeId }), ...details },
    cause: error,
  });
}
