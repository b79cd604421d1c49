import { ArgumentsHost, Catch, ExceptionFilter, HttpException, NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { AppError, ErrorCode, isAppError } from './app-error';
import { RouteRegistry } from './route-registry';
import { SERVICE_STOPPING } from './shutdown-signal';

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: unknown;
  requestId: string;
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: ErrorCode.VALIDATION_FAILED,
  401: ErrorCode.UNAUTHENTICATED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  405: ErrorCode.METHOD_NOT_ALLOWED,
  409: ErrorCode.CONFLICT,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  429: ErrorCode.RATE_LIMITED,
  503: ErrorCode.UNAVAILABLE,
};

/** Fastify's body parser fails before routing; Nest hands those on as plain HttpExceptions. */
function fromHttpStatus(status: number, message: string, details?: unknown): AppError {
  if (status === 400 && /JSON/.test(message)) return new AppError(ErrorCode.MALFORMED_JSON, `Malformed JSON body: ${message}`);
  if (status === 413) return new AppError(ErrorCode.PAYLOAD_TOO_LARGE, 'Request body is too large');
  const code = STATUS_CODES[status] ?? (status >= 500 ? ErrorCode.INTERNAL : ErrorCode.VALIDATION_FAILED);
  return new AppError(code, message, { details });
}

const hasStatusCode = (e: unknown): e is { statusCode: number; message: string } =>
  typeof e === 'object' && e !== null && typeof (e as { statusCode?: unknown }).statusCode === 'number';

/**
 * Turns anything thrown into the one error body `{code, message, details?, requestId}`.
 * A 5xx says nothing internal; the cause goes to the log with the request id.
 */
export function toAppError(exception: unknown, method: string, path: string, routes?: RouteRegistry): AppError {
  if (isAppError(exception)) return exception;
  if (exception instanceof NotFoundException && routes) {
    const allowed = routes.allowedMethods(path);
    if (allowed.length) {
      return new AppError(ErrorCode.METHOD_NOT_ALLOWED, `${method} is not allowed on ${path}`, { details: { allow: allowed } });
    }
    return new AppError(ErrorCode.NOT_FOUND, `No route for ${method} ${path}`);
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse();
    const message = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
    const details = status === 503 && typeof response === 'object' ? response : undefined;
    return fromHttpStatus(status, String(message), details);
  }
  if (hasStatusCode(exception) && exception.statusCode >= 400 && exception.statusCode < 500) {
    return fromHttpStatus(exception.statusCode, exception.message);
  }
  return new AppError(ErrorCode.INTERNAL, 'Internal server error', { cause: exception });
}

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

/**
 * The one error answer of every HTTP server of the process (the API, and a worker's health port
 * with its own small server): the status, the headers some errors call for, and the body. A 5xx
 * hides an internal message.
 */
export function errorResponse(error: AppError, requestId: string): ErrorResponse {
  const status = error.httpStatus;
  const headers: Record<string, string> = {};
  if (error.code === ErrorCode.METHOD_NOT_ALLOWED) {
    const allow = (error.details as { allow?: string[] } | undefined)?.allow;
    if (allow) headers.allow = allow.join(', ');
  }
  if (error.code === ErrorCode.UNAUTHENTICATED) headers['www-authenticate'] = 'Bearer realm="service"';
  // A 429, and a 503 the client may retry (the service stopping): when to come back.
  const retryAfter = (error.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
  if (retryAfter !== undefined && (error.code === ErrorCode.RATE_LIMITED || error.code === ErrorCode.UNAVAILABLE))
    headers['retry-after'] = String(retryAfter);
  const body: ErrorBody = {
    code: error.code,
    message: status >= 500 && error.code === ErrorCode.INTERNAL ? 'Internal server error' : error.message,
    ...(error.details !== undefined ? { details: error.details } : {}),
    requestId,
  };
  return { status, headers, body };
}

/**
 * A 5xx is the service's failure: its cause goes to the log with the request id, never to the
 * client. A request turned away while the service stops is no failure: its line in the request
 * log says enough, where a stack per refused request would bury the shutdown's own lines.
 */
export function logServerError(logger: Logger, error: AppError, requestId: string): void {
  if (error.httpStatus < 500 || error === SERVICE_STOPPING) return;
  logger.error({ reqId: requestId, err: error.cause ?? error, code: error.code }, 'request failed');
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: AppError, logger: Logger): void {
  const requestId = String(request.id);
  logServerError(logger, error, requestId);
  const { status, headers, body } = errorResponse(error, requestId);
  void reply.status(status).headers(headers).send(body);
}

@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(
    private readonly logger: Logger,
    private readonly routes: RouteRegistry,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    sendError(reply, request, toAppError(exception, request.method, request.url, this.routes), this.logger);
  }
}
