// Reranking of a search: the `rerank` option in the service's spelling, the plan it makes (the
// configured reranker or one the search names), and the reordering of the ranking's top N.
import { AppConfig } from '../config/app-config';
import { AppError, ErrorCode, FieldError, isAppError } from '../common/app-error';
import { FileStore } from '../domain/file-store.port';
import { Passage } from '../domain/file.model';
import { RerankAuthorization, Reranker, RerankerEndpoint, RerankerKind } from '../domain/reranker.port';
import { NodeCredentials } from '../engine/node-credentials.port';
import { NodeConfigurationError } from '../sdk';
import { RerankDto, SearchMode } from './search.dto';
import { RankedPassage } from './search-ranking';

/** The `rerank` option of a search (RerankDto, in the service's spelling). */
export interface RerankInput {
  enabled?: boolean;
  topN?: number;
  url?: string;
  kind?: RerankerKind;
  model?: string;
  credentialId?: string;
}

/** What became of a search's reranking, when it was to be reranked. */
export interface RerankOutcome {
  /** False: the reranker failed, and the passages come in the search's own order. */
  applied: boolean;
  /** Passages the reranker was given, from the top of the ranking. */
  candidates: number;
  /** Why it was not applied. */
  error?: string;
}

/** How one search is reranked: the endpoint (the configured one unless the search names one), and how many passages. */
export interface RerankPlan {
  topN: number;
  endpoint?: RerankerEndpoint;
  credentialId?: string;
}

/** Reranks searches for SearchService, with the reranker and credentials it was given. */
export class SearchReranking {
  constructor(
    private readonly reranker: Reranker,
    private readonly config: AppConfig,
    private readonly files: FileStore,
    private readonly credentials: NodeCredentials,
  ) {}

  /**
   * Whether and how a search is reranked: as it asks, or by the configured reranker for a hybrid
   * search that does not say. Null: not reranked.
   * @throws AppError VALIDATION_FAILED naming the rerank field that cannot be followed
   */
  plan(rerank: RerankInput | undefined, mode: SearchMode): RerankPlan | null {
    if (rerank?.enabled === false) return null;
    if (!rerank) return mode === 'hybrid' && this.reranker.configured ? { topN: this.config.RERANK_TOP_N } : null;
    const topN = rerank.topN ?? this.config.RERANK_TOP_N;
    const problems: FieldError[] = [];
    if (rerank.url === undefined) {
      for (const field of ['kind', 'model', 'credentialId'] as const) {
        if (rerank[field] !== undefined) problems.push({ field: `rerank.${snake(field)}`, reason: 'is only taken with rerank.url' });
      }
      if (!problems.length && !this.reranker.configured) {
        problems.push({
          field: 'rerank',
          reason: 'no reranker is configured on this service (RERANK_URL): name one with rerank.url and rerank.kind',
        });
      }
      if (problems.length) throw AppError.validation(problems);
      return { topN };
    }
    if (rerank.kind === undefined) throw AppError.validation([{ field: 'rerank.kind', reason: 'is required with rerank.url' }]);
    const endpoint: RerankerEndpoint = { url: rerank.url, kind: rerank.kind, ...(rerank.model ? { model: rerank.model } : {}) };
    return { topN, endpoint, ...(rerank.credentialId ? { credentialId: rerank.credentialId } : {}) };
  }

  /**
   * The ranking with its top N passages in the reranker's order (a passage it left unscored after
   * those it scored, the rest as they were), the passages it read, and what became of it. A
   * reranker that fails leaves the ranking as it was; a credential the user may not use, or not
   * send to that host, fails the search (400), as the search asked for it.
   */
  async rerank(
    userId: string,
    query: string,
    ranking: RankedPassage[],
    plan: RerankPlan,
  ): Promise<{ ranking: RankedPassage[]; passages: Map<string, Passage>; outcome: RerankOutcome }> {
    const top = ranking.slice(0, plan.topN);
    const passages = new Map((await this.files.getPassages(top.map((r) => r.passageId))).map((p) => [p.id, p]));
    const candidates = top.filter((r) => passages.has(r.passageId));
    try {
      const authorization = plan.credentialId ? await this.authorization(userId, plan.credentialId) : undefined;
      const scores = await this.reranker.rerank({
        query,
        documents: candidates.map((r) => passages.get(r.passageId)!.content),
        ...(plan.endpoint ? { endpoint: plan.endpoint } : {}),
        ...(authorization ? { authorization } : {}),
      });
      const scored = new Set(scores.map((s) => s.index));
      const reordered = [
        ...scores.map(({ index, score }) => ({ ...candidates[index], rerankScore: score })),
        ...candidates.filter((_, index) => !scored.has(index)),
        ...ranking.slice(plan.topN),
      ];
      return { ranking: reordered, passages, outcome: { applied: true, candidates: candidates.length } };
    } catch (error) {
      if (error instanceof NodeConfigurationError) throw AppError.validation([{ field: 'rerank.credential_id', reason: error.message }]);
      if (isAppError(error) && error.code === ErrorCode.FETCH_BLOCKED)
        throw AppError.validation([{ field: 'rerank.url', reason: error.message }]);
      const reason = error instanceof Error ? error.message : String(error);
      return { ranking, passages, outcome: { applied: false, candidates: candidates.length, error: reason } };
    }
  }

  /** The stored credential `credentialId` as `userId` may use it, to put into the reranker's request. */
  private async authorization(userId: string, credentialId: string): Promise<RerankAuthorization> {
    const credential = await this.credentials.resolve(userId, credentialId, { kind: 'search', runId: null });
    return async (request, signal) => credential.apply(request, signal);
  }
}

/** The REST spelling of the rerank option in the service's. */
export function rerankInput(dto: RerankDto): RerankInput {
  const { enabled, top_n: topN, url, kind, model, credential_id: credentialId } = dto;
  const input: RerankInput = { enabled, topN, url, kind, model, credentialId };
  for (const key of Object.keys(input) as (keyof RerankInput)[]) if (input[key] === undefined) delete input[key];
  return input;
}

const snake = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
