import { AppError, ErrorCode } from '../../common/app-error';
import { openAiCompatibleUrl, RetryingJsonClient, type RetryBackoff } from '../../common/retrying-json-client';
import { Embedder, type EmbedOptions } from '../../domain/embedder.port';
import { abortError, embeddableText, l2Normalize, scaleToUnit } from '../vectors';
import { parseEmbeddingsBody } from './embeddings-body';
import { undiciPost } from './undici-post';

export type { RetryBackoff };

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

/**
 * Any server speaking OpenAI's `POST /v1/embeddings` (OpenAI, Azure-style proxies, vLLM, TEI,
 * Ollama, LiteLLM...).
 */
export class OpenAiCompatibleEmbedder extends Embedder {
  readonly model: string;

  private readonly client: RetryingJsonClient;
  private readonly maxBatchSize: number;
  private readonly maxBatchChars: number;
  private readonly concurrency: number;
  private readonly closing = new AbortController();
  private knownDimension: number;
  /** Vectors asked for as base64 float32 (OpenAI's `encoding_format`), until the server refuses that. */
  private base64 = true;

  constructor(options: OpenAiCompatibleEmbedderOptions) {
    super();
    this.model = options.model;
    this.client = new RetryingJsonClient({
      endpoint: openAiCompatibleUrl(options.url, 'embeddings'),
      apiKey: options.apiKey || undefined,
      errorCode: ErrorCode.EMBEDDING_FAILED,
      serverName: 'Embeddings endpoint',
      timeoutMs: options.timeoutMs ?? 60_000,
      maxAttempts: options.maxAttempts ?? 5,
      backoff: options.backoff ?? { initialMs: 500, maxMs: 20_000 },
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      sleep: options.sleep,
      canceled: abortError,
      fetch: undiciPost,
    });
    this.knownDimension = options.dimension ?? 0;
    this.maxBatchSize = options.maxBatchSize ?? 96;
    this.maxBatchChars = options.maxBatchChars ?? 50_000;
    this.concurrency = options.concurrency ?? 2;
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
    // Base64 is a quarter of the bytes of JSON numbers and decodes natively: parsing 512 numbers per
    // text on the event loop was most of an ingestion's CPU. A server that refuses the option
    // (a 400/422 that names it) is asked again without it, and from then on never with it.
    const bytes = await this.client.postForBytes(
      () => ({ model: this.model, input, ...(this.base64 ? { encoding_format: 'base64' } : {}) }),
      signal,
      {
        adapt: ({ status, message, body }) => {
          if (!('encoding_format' in body) || (status !== 400 && status !== 422) || !/encoding|base64/i.test(message)) return false;
          this.base64 = false;
          return true;
        },
      },
    );
    let body: unknown;
    try {
      body = parseEmbeddingsBody(bytes);
    } catch (error) {
      throw new AppError(ErrorCode.EMBEDDING_FAILED, 'Embeddings endpoint answered with invalid JSON', { cause: error });
    }
    return this.vectorsOf(body, input.length);
  }

  private vectorsOf(body: unknown, expected: number): Float32Array[] {
    const malformed = (why: string) => new AppError(ErrorCode.EMBEDDING_FAILED, `Embeddings endpoint answered an unexpected body: ${why}`);
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) throw malformed('no data array');
    if (data.length !== expected) throw malformed(`${data.length} embeddings for ${expected} inputs`);

    const vectors = new Array<Float32Array>(expected);
    const block = new AnswerBlock(expected, this.knownDimension);
    for (const item of data as Array<{ index?: unknown; embedding?: unknown }>) {
      const { index, embedding } = item ?? {};
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= expected || vectors[index as number]) {
        throw malformed(`bad or repeated index ${JSON.stringify(index)}`);
      }
      // Base64 when asked for it, though a server that ignores the option answers numbers.
      const decoded = typeof embedding === 'string' ? block.decode(embedding, index as number) : null;
      const values = decoded ?? embedding;
      if (!isVectorLike(values) || values.length === 0 || (decoded === null && !allFinite(values))) {
        throw malformed(`embedding ${index as number} is not an array of numbers`);
      }
      const embedded = values as ArrayLike<number>;
      if (this.knownDimension === 0) this.knownDimension = embedded.length;
      if (embedded.length !== this.knownDimension) {
        throw new AppError(
          ErrorCode.EMBEDDING_MISMATCH,
          `Embeddings endpoint answered ${embedded.length}-dimensional vectors, ` +
            `where ${this.model} had ${this.knownDimension} dimensions`,
          { details: { expected: this.knownDimension, got: embedded.length } },
        );
      }
      // Decoded floats are this call's own: scaled where they are, not copied once more.
      if (decoded !== null && !Number.isFinite(scaleToUnit(decoded)))
        throw malformed(`embedding ${index as number} is not an array of numbers`);
      vectors[index as number] = decoded ?? l2Normalize(embedded);
    }
    return vectors;
  }
}

const isVectorLike = (values: unknown): values is ArrayLike<number> => Array.isArray(values) || values instanceof Float32Array;

/**
 * One answer's base64 embeddings decoded side by side into one array, each vector at its index:
 * one allocation an answer instead of one a vector, and consecutive vectors adjacent in memory,
 * so the index stores two of them as one row without copying them together (vector-pairs.ts).
 * An embedding of another length (a mismatch, reported by the caller) is decoded on its own.
 */
class AnswerBlock {
  private floats?: Float32Array;

  constructor(
    private readonly count: number,
    private dimension: number,
  ) {}

  decode(text: string, index: number): Float32Array | null {
    const room = Buffer.byteLength(text, 'base64');
    if (this.dimension === 0 && room > 0 && room % 4 === 0) this.dimension = room / 4;
    if (room !== this.dimension * 4) return floatsOfBase64(text);
    this.floats ??= new Float32Array(this.count * this.dimension);
    const floats = this.floats.subarray(index * this.dimension, (index + 1) * this.dimension);
    const written = Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).write(text, 'base64');
    return written === room ? floats : floatsOfBase64(text);
  }
}

/**
 * The little-endian float32s a base64 embedding holds, decoded straight into their array (no
 * intermediate Buffer to copy from); null when its bytes are not whole floats.
 */
function floatsOfBase64(text: string): Float32Array | null {
  const room = Buffer.byteLength(text, 'base64');
  const floats = new Float32Array(Math.ceil(room / 4));
  const written = Buffer.from(floats.buffer).write(text, 'base64');
  if (written % 4 !== 0) return null;
  return written === floats.byteLength ? floats : floats.subarray(0, written / 4);
}

/** A plain loop: `every(Number.isFinite)` over 512 numbers per text was a tenth of an ingesting process's CPU. */
function allFinite(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) return false;
  return true;
}
