import { AppError, ErrorCode, isAppError } from '../common/app-error';
import { isNodeError, NodeErrorKind } from '../sdk';

const NODE_ERROR_CODES: Record<NodeErrorKind, ErrorCode> = {
  configuration: ErrorCode.NODE_CONFIGURATION,
  upstream: ErrorCode.UPSTREAM_FAILED,
  timeout: ErrorCode.TIMEOUT,
  stopped: ErrorCode.WORKFLOW_STOPPED,
};

/**
 * What a node's failure means to the service, wherever plugin code ran (`execute` in a run,
 * `loadOptions` for a dropdown): a typed node error keeps its kind (configuration 400, stopped
 * 422, upstream 502 with the upstream status in `details`, timeout 504) and whether trying again
 * can help; an AppError is itself. Null for anything else: a bug of the plugin.
 */
export function nodeFailure(error: unknown): AppError | null {
  if (isAppError(error)) return error;
  if (!isNodeError(error)) return null;
  const status = (error as { status?: unknown }).status;
  const withStatus = typeof status === 'number' ? { ...error.details, status } : error.details;
  return new AppError(NODE_ERROR_CODES[error.kind], error.message, { details: withStatus, cause: error, retryable: error.retryable });
}
