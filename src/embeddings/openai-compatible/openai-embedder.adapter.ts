import { setTimeout as delay } from 'node:timers/promises';
import { AppError, ErrorCode } from '../../common/app-error';
import { Embedder, type EmbedOptions } from '../embedder.port';
import { abortError, embeddableText, l2Normalize } from '../vectors';

export interface RetryBackoff {
  /** Delay before the second attempt; each later one doubles it, up to `maxMs`, then jitter takes up to half off. */
  initialMs: number;
  maxMs: number;
}

export interface OpenAiCompatibleEmbedderOptions {
  /** Base URL of the server, with or without the trailing `/v1`. */
  url: string;
  model: string;
  apiKey?: string;
  /** Known vector length; otherwise learned from the first answer. */
  dimension?: number;
  /** Per HTTP attempt, including reading the body. */
  timeoutMs?: number;
  /** Most inputs in one request (OpenAI accepts far more; many compatible servers do not). */
  maxBatchSize?: number;
  /** Most characters in one request, a cheap stand-in for the server's token budget. */
  maxBatchChars?: number;
  /** Requests of one `embed()` call in flight at once. */
  concurrency?: number;
  maxAttempts?: number;
  backoff?: RetryBackoff;
  /** A `Retry-After` longer than this fails the call at once (retryable) rather than holding it. */
  maxRetryAfterMs?: number;
  /** How to wait between attempts; tests pass one that records the delays. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

type Attempt = { vectors: Float32Array[] } | { retry: AppError; retryAfterMs?: number };

const UPSTREAM_MESSAGE_CHARS = 500;

/**
 * Any server speaking OpenAI's `POST /v1/embeddings` (OpenAI, Azure-style proxies, vLLM, TEI,
 * Ollama, LiteLLM...). The URL comes from operator configuration, not from users, so it goes
 * through plain `fetch` rather than the SSRF-guarded client.
 */
export class OpenAiCompatibleEmbedder extends Embedder {
  readonly model: string;

  private readonly endpoint: string;
  private readonly headers: Record<string, string>;
  private readonly apiKey?: string;
  private readonly timeoutMs: number;
  private readonly maxBatchSize: number;
  private readonly maxBatchChars: number;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly backoff: RetryBackoff;
  private readonly maxRetryAfterMs: number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly closing = new AbortController();
  private knownDimension: number;

  constructor(options: OpenAiCompatibleEmbedderOptions) {
    super();
    this.model = options.model;
    this.endpoint = `${options.url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/embeddings`;
    this.apiKey = options.apiKey || undefined;
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
    };
    this.knownDimension = options.dimension ?? 0;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxBatchSize = options.maxBatchSize ?? 96;
    this.maxBatchChars = options.maxBatchChars ?? 50_000;
    this.concurrency = options.concurrency ?? 2;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.backoff = options.backoff ?? { initialMs: 500, maxMs: 20_000 };
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
  }

  get dimension(): number {
    return this.knownDimension;
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const failed = new AbortController();
    const signal = AbortSignal.any([this.closing.signal, failed.signal, ...(options.signal ? [options.signal] : [])]);
    if (signal.aborted) throw abortError(signal);

    const requests = this.plan(texts);
    const vectors = new Array<Float32Array>(texts.length);
    let next = 0;
    const sender = async () => {
      while (next < requests.length && !signal.aborted) {
        const { start, end } = requests[next++];
        const answer = await this.send(texts.slice(start, end).map(embeddableText), signal);
        answer.forEach((vector, k) => (vectors[start + k] = vector));
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.concurrency, requests.length) }, sender));
    } catch (error) {
      // Stops the sibling senders; they reject with this same error, which Promise.all ignores.
      failed.abort(error);
      throw error;
    }
    return vectors;
  }

  override async warmUp(): Promise<void> {
    if (this.knownDimension === 0) await this.embed(['warm-up']);
  }

  async close(): Promise<void> {
    this.closing.abort(new AppError(ErrorCode.UNAVAILABLE, 'The embeddings client is closed'));
  }

  /** Consecutive ranges of `texts` that each fit one request. */
  private plan(texts: string[]): Array<{ start: number; end: number }> {
    const requests: Array<{ start: number; end: number }> = [];
    let start = 0;
    let chars = 0;
    texts.forEach((text, i) => {
      const full = i - start >= this.maxBatchSize || (i > start && chars + text.length > this.maxBatchChars);
      if (full) {
        requests.push({ start, end: i });
        start = i;
        chars = 0;
      }
      chars += text.length;
    });
    requests.push({ start, end: texts.length });
    return requests;
  }

  private async send(input: string[], signal: AbortSignal): Promise<Float32Array[]> {
    let failure: AppError | undefined;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const outcome = await this.attempt(input, signal);
      if ('vectors' in outcome) return outcome.vectors;
      failure = outcome.retry;
      if (attempt === this.maxAttempts) break;
      const wait = Math.max(outcome.retryAfterMs ?? 0, this.backoffMs(attempt));
      if (wait > this.maxRetryAfterMs) {
        throw new AppError(ErrorCode.EMBEDDING_FAILED, `${failure.message}; not waiting ${Math.ceil(wait / 1000)} s to retry`, {
          retryable: true,
          cause: failure,
          details: { retryAfterMs: wait },
        });
      }
      try {
        await this.sleep(wait, signal);
      } catch (error) {
        throw signal.aborted ? abortError(signal) : error;
      }
    }
    throw new AppError(ErrorCode.EMBEDDING_FAILED, `${failure!.message} (gave up after ${this.maxAttempts} attempts)`, {
      retryable: true,
      cause: failure,
    });
  }

  /** One HTTP exchange. Resolves with what to retry, throws what must not be retried. */
  private async attempt(input: string[], signal: AbortSignal): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify({ model: this.model, input }),
        signal: AbortSignal.any([signal, timeout]),
      });
      if (response.status === 429 || response.status >= 500) {
        const message = await this.upstreamMessage(response);
        return {
          retry: new AppError(ErrorCode.EMBEDDING_FAILED, `Embeddings endpoint answered ${response.status}: ${message}`, {
            retryable: true,
            details: { status: response.status },
          }),
          retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
        };
      }
      if (!response.ok) {
        const message = await this.upstreamMessage(response);
        throw new AppError(ErrorCode.EMBEDDING_FAILED, `Embeddings endpoint answered ${response.status}: ${message}`, {
          details: { status: response.status },
        });
      }
      text = await response.text();
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (signal.aborted) throw abortError(signal);
      const reason = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : networkReason(error);
      return {
        retry: new AppError(ErrorCode.EMBEDDING_FAILED, `Embeddings endpoint unreachable: ${reason}`, {
          retryable: true,
          cause: error,
        }),
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw new AppError(ErrorCode.EMBEDDING_FAILED, 'Embeddings endpoint answered with invalid JSON', { cause: error });
    }
    return { vectors: this.vectorsOf(body, input.length) };
  }

  private vectorsOf(body: unknown, expected: number): Float32Array[] {
    const malformed = (why: string) =>
      new AppError(ErrorCode.EMBEDDING_FAILED, `Embeddings endpoint answered an unexpected body: ${why}`);
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) throw malformed('no data array');
    if (data.length !== expected) throw malformed(`${data.length} embeddings for ${expected} inputs`);

    const vectors = new Array<Float32Array>(expected);
    for (const item of data as Array<{ index?: unknown; embedding?: unknown }>) {
      const { index, embedding } = item ?? {};
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= expected || vectors[index as number]) {
        throw malformed(`bad or repeated index ${JSON.stringify(index)}`);
      }
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every(Number.isFinite)) {
        throw malformed(`embedding ${index as number} is not an array of numbers`);
      }
      if (this.knownDimension === 0) this.knownDimension = embedding.length;
      if (embedding.length !== this.knownDimension) {
        throw new AppError(
          ErrorCode.EMBEDDING_MISMATCH,
          `Embeddings endpoint answered ${embedding.length}-dimensional vectors, ` +
            `where ${this.model} had ${this.knownDimension} dimensions`,
          { details: { expected: this.knownDimension, got: embedding.length } },
        );
      }
      vectors[index as number] = l2Normalize(embedding);
    }
    return vectors;
  }

  /** The server's own explanation (OpenAI `error.message`, or `message`/`detail`/`error`), trimmed and key-free. */
  private async upstreamMessage(response: Response): Promise<string> {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const error = parsed.error;
      const candidate =
        (typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error) ??
        parsed.message ??
        parsed.detail;
      if (typeof candidate === 'string') message = candidate;
    } catch {
      // Not JSON: the raw text is the message.
    }
    message = message.trim() || response.statusText || 'no message';
    if (this.apiKey) message = message.split(this.apiKey).join('[redacted]');
    return message.length > UPSTREAM_MESSAGE_CHARS ? `${message.slice(0, UPSTREAM_MESSAGE_CHARS)}...` : message;
  }

  /** Exponential, with "equal jitter" so that clients throttled together do not retry together. */
  private backoffMs(failedAttempts: number): number {
    const ceiling = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** (failedAttempts - 1));
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

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
