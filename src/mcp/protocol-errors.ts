import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { ErrorCode, isAppError } from '../common/app-error';

/**
 * A failure of a request that answers a JSON-RPC error rather than a tool result (resources,
 * prompts, tasks): a refusal keeps the service's own words under InvalidParams (MCP answers a
 * missing resource that way too); a failure of the service says it is one; a bug says nothing
 * internal and is reported.
 */
export function protocolError(error: unknown, report?: (error: unknown) => void): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (isAppError(error) && error.code !== ErrorCode.INTERNAL) {
    if (error.httpStatus < 500) return new ProtocolError(ProtocolErrorCode.InvalidParams, `${error.code}: ${error.message}`);
    return new ProtocolError(ProtocolErrorCode.InternalError, `${error.code}: ${error.message}; retry in a moment`);
  }
  report?.(error);
  return new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
}
