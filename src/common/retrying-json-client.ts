import { setTimeout as delay } from 'node:timers/promises';
import { AppError, ErrorCode, isAppError } from './app-error';

export interface RetryBackoff {
  /** Delay before the second attempt; each later one doubles it, up to `maxMs`, then jitter takes up to half off. */
  initialMs: number;
  maxMs: number;
}

/**
 * The URL of one operation of an OpenAI-compatible API (`embeddings`, `chat/completions`) from
 * what a user configures: the server's base URL with or without `/v1`, or the operation's own URL.
 */
export function openAiCompatibleUrl(url: string, operation: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith(`/${operation}`) ? trimmed : `${trimmed.replace(/\/v1$/, '')}/v1/${operation}`;
}

export interface RetryingJsonClientOptions {
  endpoint: string;
  /** Sent as a bearer token, and redacted from every upstream message that echoes it. */
  apiKey?: string;
  /** The code of every failure this client reports. */
  errorCode: ErrorCode;
  /** How failure messages name the server, e.g. "Embeddings endpoint". */
  serverName: string;
  /** Per HTTP attempt, including reading the body. */
  timeoutMs: number;
  maxAttempts: number;
  backoff: RetryBackoff;
  /** A `Retry-After` longer than this fails the call at once (retryable) rather than holding it. */
  maxRetryAfterMs: number;
  /** How to wait between attempts; tests pass one that records the delays. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** What a canceled call throws; the signal's reason unless given. */
  canceled?: (signal: AbortSignal) => unknown;
  /**
   * How a request goes out: plain `fetch` for the operator's own endpoints (the default); a
   * node's guarded client, with its credential, for an endpoint a workflow names.
   */
  fetch?: (url: string, init: OutgoingPost) => Promise<Response>;
}

/** One POST as the client sends it. */
interface OutgoingPost {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** The fetch calls it with each piece of a 2xx body as it arrives (a streamed answer), before resolving. */
  onChunk?: (chunk: Buffer) => void;
}

/** A request the server refused for good (4xx other than 429). */
export interface RefusedRequest {
  status: number;
  /** The server's explanation, redacted and clipped. */
  message: string;
  /** The body that was sent. */
  body: object;
}

export interface PostOptions {
  /**
   * Asked about a refused request: true sends a freshly built body at once, without counting an
   * attempt (for a caller that just dropped an option the server turned out not to support).
   * Asked at most once per attempt, so a second refusal fails the call.
   */
  adapt?: (refused: RefusedRequest) => boolean;
  /** Told each piece of a successful answer's body as it arrives (a streamed answer); the whole text is still the result. */
  onChunk?: (chunk: Buffer) => void;
}

type Attempt = { bytes: Buffer } | { retry: AppError; retryAfterMs?: number } | { refused: AppError; status: number; message: string };

const UPSTREAM_MESSAGE_CHARS = 500;

const utf8 = new TextDecoder();

/** Text of an answer's bytes as `response.text()` decodes them: UTF-8, a leading byte-order mark dropped. */
export function answerText(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

/**
 * POSTs JSON to an OpenAI-compatible endpoint: 429 and 5xx answers, network failures and timeouts
 * are retried with exponential backoff (honouring `Retry-After`); any other failure is not. The URL
 * is operator configuration, not user input, so it goes through plain `fetch` rather than the
 * SSRF-guarded client, unless the caller passes its own (a workflow's endpoint: the guarded one).
 */
export class RetryingJsonClient {
  private readonly headers: Record<string, string>;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly canceled: (signal: AbortSignal) => unknown;
  private readonly send: NonNullable<RetryingJsonClientOptions['fetch']>;

  constructor(private readonly options: RetryingJsonClientOptions) {
    this.send = options.fetch ?? streamingFetch;
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    };
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.canceled = options.canceled ?? ((signal) => signal.reason);
  }

  /**
   * @param body built again for every attempt, so that it follows what the caller has learned meanwhile
   * @returns the text of the successful answer, for the caller to parse
   */
  async post(body: () => object, signal: AbortSignal, options: PostOptions = {}): Promise<string> {
    return answerText(await this.postForBytes(body, signal, options));
  }

  /**
   * As post(), the answer's bytes: a caller that reads a large answer in pieces spares the one string
   * of it all (a quarter-megabyte string cost about 2 ms of CPU to make, where its pieces cost 40 µs).
   */
  async postForBytes(body: () => object, signal: AbortSignal, options: PostOptions = {}): Promise<Buffer> {
    const { maxAttempts, maxRetryAfterMs, errorCode } = this.options;
    let failure: AppError | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const sent = body();
      let outcome = await this.attempt(sent, signal, options.onChunk);
      if ('refused' in outcome && options.adapt?.({ status: outcome.status, message: outcome.message, body: sent })) {
        outcome = await this.attempt(body(), signal, options.onChunk);
      }
      if ('bytes' in outcome) return outcome.bytes;
      if ('refused' in outcome) throw outcome.refused;
      failure = outcome.retry;
      if (attempt === maxAttempts) break;
      const wait = Math.max(outcome.retryAfterMs ?? 0, this.backoffMs(attempt));
      if (wait > maxRetryAfterMs) {
        throw new AppError(errorCode, `${failure.message}; not waiting ${Math.ceil(wait / 1000)} s to retry`, {
          retryable: true,
          cause: failure,
          details: { retryAfterMs: wait },
        });
      }
      try {
        await this.sleep(wait, signal);
      } catch (error) {
        throw signal.aborted ? this.canceled(signal) : error;
      }
    }
    throw new AppError(errorCode, `${failure!.message} (gave up after ${maxAttempts} attempts)`, {
      retryable: true,
      cause: failure,
      details: failure!.details,
    });
  }

  /** `message` with the API key redacted and cut to a readable length: safe to put in an error. */
  clip(message: string): string {
    const { apiKey } = this.options;
    const keyless = apiKey ? message.split(apiKey).join('[redacted]') : message;
    return keyless.length > UPSTREAM_MESSAGE_CHARS ? `${keyless.slice(0, UPSTREAM_MESSAGE_CHARS)}...` : keyless;
  }

  /** One HTTP exchange. Resolves with the answer or what to do next; throws what must not be retried. */
  private async attempt(body: object, signal: AbortSignal, onChunk?: (chunk: Buffer) => void): Promise<Attempt> {
    const { endpoint, timeoutMs, errorCode, serverName } = this.options;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await this.send(endpoint, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, timeout]),
        ...(onChunk ? { onChunk } : {}),
      });
      if (response.ok) return { bytes: Buffer.from(await response.arrayBuffer()) };
      const message = await this.upstreamMessage(response);
      const { status } = response;
      const retryable = status === 429 || status >= 500;
      const error = new AppError(errorCode, `${serverName} answered ${status}: ${message}`, { retryable, details: { status } });
      return retryable
        ? { retry: error, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) }
        : { refused: error, status, message };
    } catch (error) {
      if (signal.aborted) throw this.canceled(signal);
      // The outbound guard's refusal is the same on every attempt: said once, with the host and
      // what the operator can do about it.
      const refusal = guardRefusal(error);
      if (refusal)
        throw new AppError(errorCode, `${serverName} not reached: ${refusal.message}`, {
          retryable: false,
          cause: refusal,
          details: refusal.details,
        });
      const reason = timeout.aborted ? `no answer within ${timeoutMs} ms` : networkReason(error);
      return {
        retry: new AppError(errorCode, `${serverName} unreachable: ${reason}`, { retryable: true, cause: error }),
      };
    }
  }

  /** The server's own explanation (OpenAI `error.message`, or `message`/`detail`/`error`), trimmed and key-free. */
  private async upstreamMessage(response: Response): Promise<string> {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const error = parsed.error;
      const candidate =
        (typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error) ?? parsed.message ?? parsed.detail;
      if (typeof candidate === 'string') message = candidate;
    } catch {
      // Not JSON: the raw text is the message.
    }
    return this.clip(message.trim() || response.statusText || 'no message');
  }

  /** Exponential, with "equal jitter" so that clients throttled together do not retry together. */
  private backoffMs(failedAttempts: number): number {
    const { initialMs, maxMs } = this.options.backoff;
    const ceiling = Math.min(maxMs, initialMs * 2 ** (failedAttempts - 1));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}

/** `Retry-After` as delta-seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Plain fetch, reading a 2xx body piece by piece when the caller wants the pieces as they come. */
async function streamingFetch(url: string, init: OutgoingPost): Promise<Response> {
  const { onChunk, ...request } = init;
  const response = await fetch(url, request);
  if (!onChunk || !response.ok || !response.body) return response;
  const chunks: Buffer[] = [];
  for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) {
    const chunk = Buffer.from(piece);
    chunks.push(chunk);
    onChunk(chunk);
  }
  return new Response(Buffer.concat(chunks), { status: response.status, statusText: response.statusText, headers: response.headers });
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** The outbound guard's refusal (FETCH_BLOCKED) in `error` or its causes, as fetch wraps it. */
function guardRefusal(error: unknown): AppError | null {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (isAppError(cause) && cause.code === ErrorCode.FETCH_BLOCKED) return cause;
  }
  return null;
}
