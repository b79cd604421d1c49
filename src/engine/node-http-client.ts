import { ErrorCode, isAppError } from '../common/app-error';
import type { SafeFetch } from '../common/safe-fetch';
import { NodeConfigurationError, NodeHttpClient, NodeHttpRequest, NodeHttpResponse, NodeTimeoutError, NodeUpstreamError } from '../sdk';

/** The part of SafeFetch nodes use, so tests can pass a stand-in. */
export type OutboundFetch = Pick<SafeFetch, 'fetch'>;

/** A node's response body is held in memory and stored in the run record: far below the file download cap. */
export const NODE_RESPONSE_MAX_BYTES = 10 * 1024 * 1024;

/**
 * The `ctx.http` of one node try: the run's signal is always applied, and the service's error codes
 * become the node error types, so the executor's retry rules see "refused" as configuration,
 * network failures as retryable upstream errors, and time limits as timeouts.
 */
export function nodeHttpClient(fetcher: OutboundFetch, signal: AbortSignal): NodeHttpClient {
  return {
    async fetch(url: string, request: NodeHttpRequest = {}): Promise<NodeHttpResponse> {
      const body = request.body instanceof Uint8Array && !Buffer.isBuffer(request.body) ? Buffer.from(request.body) : request.body;
      try {
        return await fetcher.fetch(url, {
          method: request.method,
          headers: request.headers,
          body: body as string | Buffer | undefined,
          signal,
          maxBytes: Math.min(request.maxBytes ?? NODE_RESPONSE_MAX_BYTES, NODE_RESPONSE_MAX_BYTES),
          timeoutMs: request.timeoutMs,
          followRedirects: request.followRedirects,
        });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw toNodeError(error);
      }
    },
  };
}

function toNodeError(error: unknown): Error {
  if (!isAppError(error)) return new NodeUpstreamError(error instanceof Error ? error.message : String(error), { cause: error });
  const details = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : undefined;
  switch (error.code) {
    case ErrorCode.FETCH_BLOCKED:
      return new NodeConfigurationError(error.message, { details, cause: error });
    case ErrorCode.TIMEOUT:
      return new NodeTimeoutError(error.message, { details, cause: error });
    default:
      return new NodeUpstreamError(error.message, { details, cause: error, retryable: error.retryable });
  }
}
