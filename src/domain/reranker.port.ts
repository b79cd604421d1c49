/**
 * The three request and answer shapes of `/rerank` endpoints: Cohere (v2), Jina, and Hugging Face
 * text-embeddings-inference (TEI).
 */
export const RERANKER_KINDS = ['cohere', 'jina', 'tei'] as const;
export type RerankerKind = (typeof RERANKER_KINDS)[number];

/** The most passages one search may have reranked (RERANK_TOP_N and a search's rerank.top_n). */
export const MAX_RERANK_TOP_N = 200;

/** A `/rerank` endpoint: its full URL, the shape it speaks, and the model to ask for (Cohere and Jina). */
export interface RerankerEndpoint {
  url: string;
  kind: RerankerKind;
  model?: string;
}

/** A request about to go out, as a credential changes it (lower-case header names). */
export interface RerankRequest {
  url: string;
  headers: Record<string, string>;
}

/** Puts a credential into a request at send time; the headers it names are never carried to another origin. */
export type RerankAuthorization = (
  request: RerankRequest,
  signal?: AbortSignal,
) => Promise<RerankRequest & { sensitiveHeaders: readonly string[] }>;

export interface RerankCall {
  query: string;
  documents: string[];
  /** Another endpoint than the configured one (a search that names its own), reached through the guarded client. */
  endpoint?: RerankerEndpoint;
  authorization?: RerankAuthorization;
  signal?: AbortSignal;
}

/** The relevance of `documents[index]` to the query: larger is more relevant. */
export interface RerankScore {
  index: number;
  score: number;
}

/**
 * A cross-scorer that orders candidate passages by their relevance to a query. The DI token of the
 * reranking port. None is configured by default (`configured` is null): then only a search that
 * names its own endpoint is reranked.
 */
export abstract class Reranker {
  /** The endpoint the operator configured, or null. */
  abstract readonly configured: RerankerEndpoint | null;

  /**
   * One score per document the endpoint scored, best first; indexes are checked (in range, each at
   * most once). A document the endpoint left out has no score.
   * @throws AppError UPSTREAM_FAILED when the endpoint fails, answers late or answers nonsense;
   *   whatever `authorization` throws. A call that names no endpoint when none is configured is a
   *   mistake of the caller's (check `configured`).
   */
  abstract rerank(call: RerankCall): Promise<RerankScore[]>;
}
