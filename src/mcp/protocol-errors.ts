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

/** The most issues schemaIssues names, and the most characters of a message it cannot read. */
const ISSUES_NAMED = 5;
const MESSAGE_CHARS = 300;

/**
 * What a schema refusal from the SDK (its schema library's issues, as JSON) says is wrong, one
 * `field: reason` an issue (`params.uri: Invalid input: expected string, received number`); a
 * message that is not such a list is kept, clipped.
 */
export function schemaIssues(message: string): string {
  let issues: unknown;
  try {
    issues = JSON.parse(message);
  } catch {
    issues = undefined;
  }
  if (!Array.isArray(issues) || issues.length === 0)
    return message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS)}…` : message;
  const named = issues.slice(0, ISSUES_NAMED).map((issue: { path?: unknown; message?: unknown }) => {
    const path = Array.isArray(issue.path) && issue.path.length ? issue.path.join('.') : 'the request';
    return `${path}: ${typeof issue.message === 'string' ? issue.message : 'is invalid'}`;
  });
  return named.join('; ') + (issues.length > ISSUES_NAMED ? `; and ${issues.length - ISSUES_NAMED} more` : '');
}
