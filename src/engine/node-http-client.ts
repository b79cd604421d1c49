import { ErrorCode, isAppError } from '../common/app-error';
import type { SafeFetch, SafeRequest } from '../common/safe-fetch';
import { NodeConfigurationError, NodeHttpClient, NodeHttpRequest, NodeHttpResponse, NodeTimeoutError, NodeUpstreamError } from '../sdk';
import type { ResolvedCredential } from './node-credentials.port';
import type { Redactor } from './redactor';

/** The part of SafeFetch nodes use, so tests can pass a stand-in. */
export type OutboundFetch = Pick<SafeFetch, 'fetch'>;

/** A node's response body is held in memory and stored in the run record: far below the file download cap. */
export const NODE_RESPONSE_MAX_BYTES = 10 * 1024 * 1024;

/** What the run gives a node's HTTP client besides the fetcher and its signal. */
export interface NodeHttpRun {
  /** A credential as the run's user may use it (resolved once per run). */
  credential?: (id: string) => Promise<ResolvedCredential>;
  /** Called with every value a credential put into a request, before it is sent: the run masks them from then on. */
  reveal?: (secrets: readonly string[]) => void;
  /** The run's masks as they stand: a header holding a masked value is dropped on a redirect to another origin. */
  redactor?: () => Redactor;
}

/**
 * The `ctx.http` of one node try: the run's signal is always applied, credentials are injected at
 * send time, headers carrying a secret never follow a redirect to another origin, and the
 * service's error codes become the node error types, so the executor's retry rules see "refused"
 * as configuration, network failures as retryable upstream errors, and time limits as timeouts.
 */
export function nodeHttpClient(fetcher: OutboundFetch, signal: AbortSignal, run: NodeHttpRun = {}): NodeHttpClient {
  const send = async (
    url: string,
    request: NodeHttpRequest,
    headers: Record<string, string>,
    sensitiveHeaders: string[],
  ): Promise<NodeHttpResponse> => {
    const body = request.body instanceof Uint8Array && !Buffer.isBuffer(request.body) ? Buffer.from(request.body) : request.body;
    const signals = request.signal ? AbortSignal.any([signal, request.signal]) : signal;
    const options: SafeRequest = {
      method: request.method,
      headers,
      body: body as string | Buffer | undefined,
      signal: signals,
      maxBytes: Math.min(request.maxBytes ?? NODE_RESPONSE_MAX_BYTES, NODE_RESPONSE_MAX_BYTES),
      timeoutMs: request.timeoutMs,
      followRedirects: request.followRedirects,
      sensitiveHeaders,
      onChunk: request.onChunk,
    };
    try {
      return await fetcher.fetch(url, options);
    } catch (error) {
      if (signals.aborted) throw signals.reason;
      throw toNodeError(error);
    }
  };

  return {
    async fetch(url: string, request: NodeHttpRequest = {}): Promise<NodeHttpResponse> {
      const headers = Object.fromEntries(Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
      // A header that holds a secret variable's value is as sensitive as a credential's.
      const redactor = run.redactor?.();
      const secretHeaders = redactor?.active ? Object.keys(headers).filter((name) => redactor.string(headers[name]) !== headers[name]) : [];
      if (!request.credential) return send(url, request, headers, secretHeaders);

      if (!run.credential)
        throw new NodeConfigurationError(`Credential ${request.credential} cannot be used here: credentials are not available to this run`);
      const credential = await run.credential(request.credential);
      const attempt = async () => {
        const applied = await credential.apply({ url, headers }, signal);
        run.reveal?.(applied.secrets);
        return send(applied.url, request, applied.headers, [...secretHeaders, ...applied.sensitiveHeaders]);
      };
      const response = await attempt().catch((error: unknown) => {
        throw asCredentialFailure(error, credential.id);
      });
      if (response.status !== 401 || credential.type !== 'oauth2-client-credentials') return response;
      // The token may have been revoked or expired early: fetch a new one, once.
      credential.refused();
      return attempt();
    },
  };
}

/** A token endpoint that refused or failed is the credential's problem, said so (AppErrors from the token fetch). */
function asCredentialFailure(error: unknown, credentialId: string): unknown {
  if (!isAppError(error)) return error;
  return toNodeError(error, `Credential ${credentialId}: `);
}

function toNodeError(error: unknown, prefix = ''): Error {
  if (!isAppError(error)) return new NodeUpstreamError(error instanceof Error ? error.message : String(error), { cause: error });
  const details = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : undefined;
  const message = `${prefix}${error.message}`;
  switch (error.code) {
    case ErrorCode.FETCH_BLOCKED:
      return new NodeConfigurationError(message, { details, cause: error });
    case ErrorCode.TIMEOUT:
      return new NodeTimeoutError(message, { details, cause: error });
    default:
      return new NodeUpstreamError(message, { details, cause: error, retryable: error.retryable });
  }
}
