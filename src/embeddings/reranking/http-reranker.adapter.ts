import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import type { SafeFetch } from '../../common/safe-fetch';
import { RerankCall, Reranker, RerankerEndpoint, RerankScore } from '../../domain/reranker.port';

/** An answer scores at most MAX_RERANK_TOP_N documents in a few dozen bytes each; this leaves room for echoed texts. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** A passage is cut to this many characters before it is sent: rerankers read a few hundred tokens of each anyway. */
export const MAX_DOCUMENT_CHARS = 4000;
const UPSTREAM_MESSAGE_CHARS = 300;

export interface HttpRerankerOptions {
  /** The operator's endpoint (RERANK_URL and its kind and model), or null: none is configured. */
  configured: RerankerEndpoint | null;
  apiKey?: string;
  /** Reaches the configured endpoint, whatever its address (the operator chose it); closed with the reranker. */
  configuredFetch: Pick<SafeFetch, 'fetch' | 'close'> | null;
  /** Reaches an endpoint a search names: private addresses refused unless FETCH_ALLOWED_HOSTS lists them. */
  guardedFetch: Pick<SafeFetch, 'fetch'>;
  timeoutMs: number;
}

/**
 * The `/rerank` endpoints of Cohere (v2: `{model, query, documents, top_n}` answered by
 * `{results: [{index, relevance_score}]}`), Jina (the same shape) and Hugging Face
 * text-embeddings-inference (`{query, texts}` answered by `[{index, score}]`). One call per search,
 * no retries: a search that waited for a failing reranker would rather answer in its own order.
 */
export class HttpReranker extends Reranker {
  readonly configured: RerankerEndpoint | null;

  constructor(private readonly options: HttpRerankerOptions) {
    super();
    this.configured = options.configured;
  }

  async rerank({ query, documents, endpoint, authorization, signal }: RerankCall): Promise<RerankScore[]> {
    const target = endpoint ?? this.configured;
    if (!target) throw new Error('No reranker is configured and the call names no endpoint');
    if (documents.length === 0) return [];
    const texts = documents.map((text) => text.slice(0, MAX_DOCUMENT_CHARS));
    let request = {
      url: target.url,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(!endpoint && this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      } as Record<string, string>,
    };
    let sensitiveHeaders: readonly string[] = endpoint ? [] : ['authorization'];
    if (authorization) ({ sensitiveHeaders, ...request } = await authorization(request, signal));
    const fetcher = (!endpoint && this.options.configuredFetch) || this.options.guardedFetch;
    const host = new URL(request.url).host;
    const response = await fetcher
      .fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: JSON.stringify(requestBody(target, query, texts)),
        signal,
        timeoutMs: this.options.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        sensitiveHeaders,
      })
      .catch((error: unknown) => {
        // An address the guarded client refuses is the caller's to change, not a failure of the reranker.
        if (isAppError(error) && error.code === ErrorCode.FETCH_BLOCKED) throw error;
        throw upstream(`The reranker at ${host} could not be reached: ${isAppError(error) ? error.message : String(error)}`, error);
      });
    const text = response.body.toString('utf8');
    if (response.status < 200 || response.status > 299) {
      throw upstream(`The reranker at ${host} answered ${response.status}: ${text.slice(0, UPSTREAM_MESSAGE_CHARS)}`);
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw upstream(`The reranker at ${host} answered something that is not JSON`);
    }
    return scores(answer, target, documents.length, host);
  }

  async close(): Promise<void> {
    await this.options.configuredFetch?.close();
  }
}

function requestBody(endpoint: RerankerEndpoint, query: string, texts: string[]): object {
  switch (endpoint.kind) {
    case 'tei':
      return { query, texts, truncate: true };
    case 'jina':
      return {
        ...(endpoint.model ? { model: endpoint.model } : {}),
        query,
        documents: texts,
        top_n: texts.length,
        return_documents: false,
      };
    case 'cohere':
      return { ...(endpoint.model ? { model: endpoint.model } : {}), query, documents: texts, top_n: texts.length };
  }
}

/** The scores of an answer, best first, each index checked once: a wrong answer fails rather than reorders at random. */
function scores(answer: unknown, endpoint: RerankerEndpoint, count: number, host: string): RerankScore[] {
  const list = endpoint.kind === 'tei' ? answer : (answer as { results?: unknown } | null)?.results;
  const field = endpoint.kind === 'tei' ? 'score' : 'relevance_score';
  if (!Array.isArray(list)) {
    throw upstream(
      `The reranker at ${host} answered without ${endpoint.kind === 'tei' ? 'a list of scores' : 'a results list'} (kind ${endpoint.kind})`,
    );
  }
  const seen = new Set<number>();
  const result: RerankScore[] = [];
  for (const item of list as unknown[]) {
    const index = (item as Record<string, unknown> | null)?.index;
    const score = (item as Record<string, unknown> | null)?.[field];
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) {
      throw upstream(`The reranker at ${host} answered a result whose index is not one of the ${count} documents sent, or repeats one`);
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) {
      throw upstream(`The reranker at ${host} answered a result without a numeric ${field}`);
    }
    seen.add(index);
    result.push({ index, score });
  }
  return result.sort((a, b) => b.score - a.score || a.index - b.index);
}

const upstream = (message: string, cause?: unknown) => new AppError(ErrorCode.UPSTREAM_FAILED, message, { cause, retryable: true });
