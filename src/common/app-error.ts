/**
 * The one error type of the service. Every failure that can reach a caller is an AppError with a
 * stable code; the global filter maps codes to HTTP statuses and MCP tools map them to `isError`.
 */
export enum ErrorCode {
  VALIDATION_FAILED = 'VALIDATION_FAILED',
  MALFORMED_JSON = 'MALFORMED_JSON',
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  /** The caller's OAuth token does not carry the scope the operation needs (step-up: authorize again with it). */
  INSUFFICIENT_SCOPE = 'INSUFFICIENT_SCOPE',
  NOT_FOUND = 'NOT_FOUND',
  METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED',
  CONFLICT = 'CONFLICT',
  /** Something that was valid once and is no more (an expired approval link). */
  GONE = 'GONE',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE = 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED = 'RATE_LIMITED',
  /** Outbound fetch refused: private address, bad scheme, too many redirects. */
  FETCH_BLOCKED = 'FETCH_BLOCKED',
  /** Outbound fetch failed: DNS, connection, HTTP error status of a file download. */
  FETCH_FAILED = 'FETCH_FAILED',
  FILE_TOO_LARGE = 'FILE_TOO_LARGE',
  UNSUPPORTED_TYPE = 'UNSUPPORTED_TYPE',
  EXTRACTION_FAILED = 'EXTRACTION_FAILED',
  EMBEDDING_FAILED = 'EMBEDDING_FAILED',
  EMBEDDING_MISMATCH = 'EMBEDDING_MISMATCH',
  EXPRESSION_FAILED = 'EXPRESSION_FAILED',
  /** The user's code (Code node) threw, did not parse, or returned what JSON cannot hold. */
  CODE_ERROR = 'CODE_ERROR',
  /** User code used more memory than its sandbox allows. */
  MEMORY_LIMIT = 'MEMORY_LIMIT',
  /** User code's result is larger than a sandbox may hand the service. */
  RESULT_TOO_LARGE = 'RESULT_TOO_LARGE',
  /** A sandbox gave no answer within its wall-clock backstop (CPU limit or not) and was replaced. */
  SANDBOX_UNRESPONSIVE = 'SANDBOX_UNRESPONSIVE',
  /** A sandbox process died for a reason other than memory and was replaced. */
  SANDBOX_CRASHED = 'SANDBOX_CRASHED',
  NODE_CONFIGURATION = 'NODE_CONFIGURATION',
  UPSTREAM_FAILED = 'UPSTREAM_FAILED',
  TIMEOUT = 'TIMEOUT',
  CANCELED = 'CANCELED',
  /** A Stop and Error node ended the run on purpose. */
  WORKFLOW_STOPPED = 'WORKFLOW_STOPPED',
  /** A worker stopped in the middle of a node that must not run twice. */
  INTERRUPTED = 'INTERRUPTED',
  UNAVAILABLE = 'UNAVAILABLE',
  /** The disk holding the service's data (DATA_DIR, or MongoDB's) is full. */
  INSUFFICIENT_STORAGE = 'INSUFFICIENT_STORAGE',
  INTERNAL = 'INTERNAL',
}

const HTTP_STATUS: Record<ErrorCode, number> = {
  [ErrorCode.VALIDATION_FAILED]: 400,
  [ErrorCode.MALFORMED_JSON]: 400,
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.INSUFFICIENT_SCOPE]: 403,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.METHOD_NOT_ALLOWED]: 405,
  [ErrorCode.CONFLICT]: 409,
  [ErrorCode.GONE]: 410,
  [ErrorCode.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: 415,
  [ErrorCode.RATE_LIMITED]: 429,
  [ErrorCode.FETCH_BLOCKED]: 400,
  [ErrorCode.FETCH_FAILED]: 502,
  [ErrorCode.FILE_TOO_LARGE]: 413,
  [ErrorCode.UNSUPPORTED_TYPE]: 415,
  [ErrorCode.EXTRACTION_FAILED]: 422,
  [ErrorCode.EMBEDDING_FAILED]: 502,
  [ErrorCode.EMBEDDING_MISMATCH]: 409,
  [ErrorCode.EXPRESSION_FAILED]: 400,
  [ErrorCode.CODE_ERROR]: 422,
  [ErrorCode.MEMORY_LIMIT]: 422,
  [ErrorCode.RESULT_TOO_LARGE]: 422,
  [ErrorCode.SANDBOX_UNRESPONSIVE]: 503,
  [ErrorCode.SANDBOX_CRASHED]: 500,
  [ErrorCode.NODE_CONFIGURATION]: 400,
  [ErrorCode.UPSTREAM_FAILED]: 502,
  [ErrorCode.TIMEOUT]: 504,
  [ErrorCode.CANCELED]: 409,
  [ErrorCode.WORKFLOW_STOPPED]: 422,
  [ErrorCode.INTERRUPTED]: 503,
  [ErrorCode.UNAVAILABLE]: 503,
  [ErrorCode.INSUFFICIENT_STORAGE]: 507,
  [ErrorCode.INTERNAL]: 500,
};

export interface FieldError {
  field: string;
  reason: string;
}

export interface AppErrorOptions {
  details?: unknown;
  cause?: unknown;
  /** Whether repeating the same operation may succeed (network blips, 429, 5xx upstream). */
  retryable?: boolean;
}

export class AppError extends Error {
  readonly details?: unknown;
  readonly retryable: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.details = options.details;
    this.retryable = options.retryable ?? false;
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }

  static validation(fields: FieldError[], message = 'Request validation failed'): AppError {
    return new AppError(ErrorCode.VALIDATION_FAILED, message, { details: { fields } });
  }

  static notFound(what: string, id?: string): AppError {
    return new AppError(ErrorCode.NOT_FOUND, id ? `${what} ${id} not found` : `${what} not found`);
  }

  static forbidden(message: string): AppError {
    return new AppError(ErrorCode.FORBIDDEN, message);
  }

  static conflict(message: string, details?: unknown): AppError {
    return new AppError(ErrorCode.CONFLICT, message, { details });
  }

  /** A file (upload, data: URL, download) over MAX_FILE_BYTES. */
  static fileTooLarge(maxBytes: number): AppError {
    return new AppError(ErrorCode.FILE_TOO_LARGE, `The file is larger than the limit of ${maxBytes} bytes`, { details: { maxBytes } });
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
