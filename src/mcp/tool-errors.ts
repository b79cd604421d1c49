import type { CallToolResult } from '@modelcontextprotocol/server';
import { AppError, ErrorCode, FieldError, isAppError } from '../common/app-error';

/** What a model can do about each failure; the service's own message says what went wrong. */
const NEXT_STEP: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.NOT_FOUND]:
    'Check the id: service_list_collections lists the collections you can use and service_list_collection_files the files of one.',
  [ErrorCode.FORBIDDEN]:
    'Your role on this collection does not allow this; ask its owner for the editor role, or use a collection you own.',
  [ErrorCode.INSUFFICIENT_SCOPE]:
    'The user did not grant this when connecting; they can connect again (the client asks them) and grant the scope named.',
  [ErrorCode.VALIDATION_FAILED]: 'Correct the arguments and call again.',
  [ErrorCode.UNAUTHENTICATED]: 'The API key of this MCP connection was refused; the user must configure a valid key.',
  [ErrorCode.FETCH_BLOCKED]: 'The URL must be a public http(s) address.',
  [ErrorCode.FETCH_FAILED]: 'Check that the URL is correct and publicly downloadable, then try again.',
  [ErrorCode.FILE_TOO_LARGE]: 'Use a smaller file.',
  [ErrorCode.UNSUPPORTED_TYPE]: 'Use a PDF, DOCX, XLSX, PPTX, CSV, HTML, Markdown, JSON or plain-text file.',
  [ErrorCode.EMBEDDING_MISMATCH]: 'This collection was indexed with another embedding model; create a new collection for these files.',
  [ErrorCode.CONFLICT]: 'Reload the current state (e.g. service_get_collection) before trying again.',
  [ErrorCode.RATE_LIMITED]: 'Wait a little, then retry.',
};

const RETRY_LATER = 'This is temporary: retry in a moment.';

function describeFields(error: AppError): string {
  const fields = (error.details as { fields?: FieldError[] } | undefined)?.fields;
  return fields?.length ? ` (${fields.map((f) => `${f.field}: ${f.reason}`).join('; ')})` : '';
}

/**
 * A tool failure as the model sees it: `isError` with the error code, what went wrong and what to
 * do next. Anything that is not an AppError is a bug and says nothing internal.
 */
export function toolFailure(error: unknown): CallToolResult {
  const text =
    isAppError(error) && error.code !== ErrorCode.INTERNAL
      ? describe(error)
      : 'INTERNAL: the tool failed unexpectedly. Retry later; if it persists, report it to the service operator.';
  return { content: [{ type: 'text', text }], isError: true };
}

function describe(error: AppError): string {
  const next = NEXT_STEP[error.code] ?? (error.retryable || error.httpStatus >= 500 ? RETRY_LATER : undefined);
  const what = `${error.code}: ${error.message.replace(/\.$/, '')}${describeFields(error)}.`;
  return next ? `${what} ${next}` : what;
}
