// One search from its input to its page: targets, filter, rankings, hydration. The pure ranking
// steps (fusion, per-file cap, MMR) live in search-ranking.ts, reranking in search-rerank.ts.
import { Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError } from '../common/app-error';
import { validateInput } from '../common/input-validation';
import { Embedder } from '../domain/embedder.port';
import { Metrics } from '../metrics/metrics.service';
import { NodeCredentials } from '../engine/node-credentials.port';
import { AppConfig } from '../config/app-config';
import { Reranker } from '../domain/reranker.port';
import { CollectionStore } from '../domain/collection-store.port';
import { FileStore } from '../domain/file-store.port';
import { Passage } from '../domain/file.model';
import { FileFilter, parseFileFilter } from '../domain/file-filter';
import { DEFAULT_TOP_K, MAX_SEARCH_COLLECTIONS, RerankDto, SearchMode, SearchOptionsDto } from './search.dto';
import { MAX_FILTER_FILES, MAX_SEARCH_K, MAX_VECTOR_PASSAGES, modelMismatch, UnitFilter, VectorIndex } from '../domain/vector-index.port';
import {
  capPerFile,
  firstPerPassage,
  fuse,
  maximalMarginalRelevance,
  nearestDistance,
  RankedPassage,
  rerankRelevance,
} from './search-ranking';
import { RerankInput, rerankInput, RerankOutcome, SearchReranking } from './search-rerank';

export type { SearchMode };
export type { RerankInput, RerankOutcome };
export { rerankInput };

export interface SearchInput {
  text: string;
  topK: number;
  offset: number;
  mode?: SearchMode;
  /** A file filter as users write it (see domain/file-filter.ts); checked here. */
  filter?: unknown;
  /** At most this many passages of one file. */
  perFile?: number;
  /** Maximal marginal relevance: 1 is relevance alone, lower favours passages unlike those chosen. */
  mmrLambda?: number;
  /** Only passages whose score (1 - distance) is at least this. */
  minScore?: number;
  rerank?: RerankInput;
}

export interface SearchResponse {
  result: SearchResultItem[];
  /** Present when the search was to be reranked. */
  rerank?: RerankOutcome;
}

/** Which collections a search reads: the ones named, or every one the caller can read. */
export type SearchTarget = { collectionIds: readonly string[] } | { all: true };

export interface SearchResultItem {
  /** Passage id. */
  id: string;
  content: string;
  /** Cosine distance between the query and the passage's nearest embedded window. */
  distance: number;
  collectionId: string;
  fileId: string;
  fileName: string;
  /** Position of the passage within its file. */
  chunkIndex: number;
  page?: number;
  /** The reranker's relevance score (larger is more relevant), for a passage it reranked. */
  rerankScore?: number;
}

/** Windows fetched per wanted passage: a passage has several windows, and near ones cluster. */
const UNITS_PER_PASSAGE = 4;
/**
 * Passages each ranking contributes to fusion at least. A fixed floor keeps the first pages of a
 * hybrid search in the same order whatever the offset.
 */
const HYBRID_MIN_DEPTH = 50;
/** Candidates maximal marginal relevance chooses from, beyond the passages wanted: their stored vectors are read once. */
const MMR_EXTRA_CANDIDATES = 50;

type CheckedInput = Required<Omit<SearchInput, 'filter' | 'perFile' | 'mmrLambda' | 'minScore' | 'rerank'>> &
  Pick<SearchInput, 'perFile' | 'mmrLambda' | 'minScore' | 'rerank'> & { filter?: FileFilter };

/**
 * Semantic search over the passages of one collection or several. The query is embedded once; the
 * index returns the nearest embedded windows, which collapse to distinct passages with their best
 * distance, and `offset`/`topK` page over those passages. Hybrid mode fuses that ranking with
 * BM25's by reciprocal rank. Only files in status `indexed` are searched, and of those only the
 * ones a filter keeps: the file store resolves the filter to file ids, which the index takes as
 * its file filter, unless the index filters on the file fields it keeps (Elasticsearch), which
 * takes the filter itself. Across collections, each collection is ranked on its own and the rankings are
 * fused by reciprocal rank, so a large collection's many near passages cannot crowd out the best
 * match of a small one. A reranker, when one is asked for (or configured, for hybrid mode), then
 * reorders the top N passages; when it fails the search answers in its own order and says so.
 */
@Injectable()
export class SearchService {
  private readonly reranking: SearchReranking;

  constructor(
    private readonly access: AccessPolicy,
    private readonly collections: CollectionStore,
    private readonly files: FileStore,
    private readonly index: VectorIndex,
    private readonly embedder: Embedder,
    private readonly metrics: Metrics,
    reranker: Reranker,
    credentials: NodeCredentials,
    config: AppConfig,
  ) {
    this.reranking = new SearchReranking(reranker, config, files, credentials);
  }

  async search(principal: Principal, collectionId: string, input: SearchInput): Promise<SearchResponse> {
    await this.access.require(principal, 'collection', collectionId, 'viewer');
    return this.run(principal.userId, [collectionId], checkedInput(input));
  }

  /**
   * One search over several collections. Every named collection is checked before any is searched:
   * one the caller cannot read fails the whole search, naming it.
   */
  async searchMany(principal: Principal, target: SearchTarget, input: SearchInput): Promise<SearchResponse> {
    const checked = checkedInput(input);
    const collectionIds = await this.targets(principal, target);
    return this.run(principal.userId, collectionIds, checked);
  }

  private async targets(principal: Principal, target: SearchTarget): Promise<string[]> {
    if ('all' in target) {
      const visible = await this.collections.listVisible(principal.userId, { offset: 0, limit: MAX_SEARCH_COLLECTIONS + 1 });
      if (visible.total > MAX_SEARCH_COLLECTIONS) {
        throw AppError.validation([
          {
            field: 'all',
            reason: `you can read ${visible.total} collections; a search reads at most ${MAX_SEARCH_COLLECTIONS}: name them in collection_ids`,
          },
        ]);
      }
      return visible.items.map((collection) => collection.id);
    }
    const ids = [...new Set(target.collectionIds)];
    if (ids.length === 0 || ids.length > MAX_SEARCH_COLLECTIONS) {
      throw AppError.validation([{ field: 'collection_ids', reason: `must name 1 to ${MAX_SEARCH_COLLECTIONS} collections` }]);
    }
    for (const id of ids) await this.access.require(principal, 'collection', id, 'viewer');
    return ids;
  }

  private async run(userId: string, collectionIds: readonly string[], input: CheckedInput): Promise<SearchResponse> {
    const { text, topK, offset, mode, filter, perFile, mmrLambda, minScore, rerank } = input;
    const plan = this.reranking.plan(rerank, mode);
    const searchable: string[] = [];
    for (const collectionId of collectionIds) {
      const collection = await this.collections.get(collectionId);
      if (!collection) throw AppError.notFound('collection', collectionId);
      // Nothing was ever indexed: no vectors to compare.
      if (collection.embeddingModel === null) continue;
      if (collection.embeddingModel !== this.embedder.model) {
        throw modelMismatch(collectionId, { model: collection.embeddingModel, dimension: collection.embeddingDimension }, this.embedder);
      }
      searchable.push(collectionId);
    }
    // No need to embed the query when there is nothing to compare it with.
    if (searchable.length === 0) return { result: [] };

    const started = performance.now();
    const wanted = offset + topK;
    // MMR chooses from more candidates than wanted, and reranking reorders its top N whatever page
    // is asked for: the ranking reaches that deep.
    const depth = Math.max(mmrLambda === undefined ? wanted : wanted + MMR_EXTRA_CANDIDATES, plan?.topN ?? 0);
    const query = await this.embedder.embedQuery(text);
    const indexed = new IndexedFiles(this.files);
    const rankings = await Promise.all(
      searchable.map(async (collectionId) => {
        const scope = filter ? await this.filteredFiles(collectionId, filter) : undefined;
        if (scope && 'fileIds' in scope && scope.fileIds.length === 0) return [];
        const search: CollectionSearch = { collectionId, query, text, depth, scope, perFile, indexed };
        return mode === 'hybrid' ? this.hybridPassages(search) : this.nearestPassages(search, depth);
      }),
    );
    let ranking = rankings.length === 1 ? rankings[0] : fuse(rankings);
    let passages = new Map<string, Passage>();
    let outcome: RerankOutcome | undefined;
    if (plan) ({ ranking, passages, outcome } = await this.reranking.rerank(userId, text, ranking, plan));
    if (mmrLambda !== undefined && mmrLambda < 1) ranking = await this.diversify(ranking, query, mmrLambda, wanted);
    let result = await this.hydrate(ranking.slice(offset, wanted), query, indexed, passages);
    if (minScore !== undefined) result = result.filter((hit) => 1 - hit.distance >= minScore);
    this.metrics.search(mode, (performance.now() - started) / 1000);
    return outcome ? { result, rerank: outcome } : { result };
  }

  /**
   * The filter as the index takes it: as it is, for an index that keeps file fields with its units;
   * otherwise the ids of the files it keeps, refused past what the index takes.
   */
  private async filteredFiles(collectionId: string, filter: FileFilter): Promise<UnitFilter> {
    if (this.index.filtersFileFields) return { files: filter };
    const fileIds = await this.files.matchingIds(collectionId, filter, MAX_FILTER_FILES + 1);
    if (fileIds.length > MAX_FILTER_FILES) {
      throw AppError.validation([
        { field: 'filter', reason: `keeps more than ${MAX_FILTER_FILES} files of collection ${collectionId}; narrow it` },
      ]);
    }
    return { fileIds };
  }

  private async hybridPassages(search: CollectionSearch): Promise<RankedPassage[]> {
    const depth = Math.max(search.depth, HYBRID_MIN_DEPTH);
    const [vector, keyword] = await Promise.all([this.nearestPassages(search, depth), this.keywordPassages(search, depth)]);
    return capPerFile(fuse([vector, keyword]), search.perFile);
  }

  /**
   * The `wanted` nearest passages of indexed files. Asks the index for a few windows per passage
   * and asks again for more only when windows cluster on fewer passages than wanted.
   */
  private async nearestPassages(search: CollectionSearch, wanted: number): Promise<RankedPassage[]> {
    const { collectionId, query, scope, perFile, indexed } = search;
    let k = Math.min(MAX_SEARCH_K, wanted * UNITS_PER_PASSAGE);
    for (;;) {
      const hits = await this.index.searchVector(collectionId, query, k, scope);
      const ranking = capPerFile(await indexed.keep(firstPerPassage(collectionId, hits)), perFile);
      if (ranking.length >= wanted || hits.length < k || k === MAX_SEARCH_K) return ranking.slice(0, wanted);
      k = Math.min(MAX_SEARCH_K, k * 4);
    }
  }

  private async keywordPassages(search: CollectionSearch, wanted: number): Promise<RankedPassage[]> {
    const { collectionId, text, scope, perFile, indexed } = search;
    const hits = await this.index.searchText(collectionId, text, Math.min(MAX_SEARCH_K, wanted * UNITS_PER_PASSAGE), scope);
    return capPerFile(await indexed.keep(firstPerPassage(collectionId, hits)), perFile).slice(0, wanted);
  }

  /**
   * Maximal marginal relevance (see search-ranking.ts) over the ranking's first candidates, whose
   * stored window vectors are read from the index (no embedder call); at most `wanted` passages.
   * After a reranker, it chooses among the passages the reranker scored, their relevance its score
   * (scaled to 0-1), and the ranking's other passages follow in order when those are too few: the
   * reranker judges the whole top N, and diversity then trades on its judgement.
   */
  private async diversify(ranking: RankedPassage[], query: Float32Array, lambda: number, wanted: number): Promise<RankedPassage[]> {
    const scored = ranking.filter((r) => r.rerankScore !== undefined);
    if (scored.length === 0) {
      const pool = ranking.slice(0, wanted + MMR_EXTRA_CANDIDATES);
      return maximalMarginalRelevance(pool, await this.storedVectors(pool), query, lambda, wanted);
    }
    const chosen = maximalMarginalRelevance(scored, await this.storedVectors(scored), query, lambda, wanted, rerankRelevance(scored));
    return [...chosen, ...ranking.filter((r) => r.rerankScore === undefined)].slice(0, wanted);
  }

  /** The stored window vectors of the ranked passages, by passage id, read per collection in batches the index takes. */
  private async storedVectors(ranking: RankedPassage[]): Promise<Map<string, Float32Array[]>> {
    const byCollection = new Map<string, string[]>();
    for (const { collectionId, passageId } of ranking)
      byCollection.set(collectionId, [...(byCollection.get(collectionId) ?? []), passageId]);
    const vectors = new Map<string, Float32Array[]>();
    for (const [collectionId, passageIds] of byCollection) {
      for (let start = 0; start < passageIds.length; start += MAX_VECTOR_PASSAGES) {
        const read = await this.index.passageVectors(collectionId, passageIds.slice(start, start + MAX_VECTOR_PASSAGES));
        for (const [passageId, list] of read) vectors.set(passageId, list);
      }
    }
    return vectors;
  }

  /** @param known passages already read, by id: only the others are read */
  private async hydrate(
    ranking: RankedPassage[],
    query: Float32Array,
    indexed: IndexedFiles,
    known: Map<string, Passage>,
  ): Promise<SearchResultItem[]> {
    const unread = ranking.filter((r) => !known.has(r.passageId)).map((r) => r.passageId);
    const passages = new Map([...known, ...(unread.length ? await this.files.getPassages(unread) : []).map((p) => [p.id, p] as const)]);
    const distances = await this.distancesOfKeywordOnly(ranking, passages, query);
    const result: SearchResultItem[] = [];
    for (const ranked of ranking) {
      const passage = passages.get(ranked.passageId);
      // Deleted since the index answered.
      if (!passage) continue;
      const item: SearchResultItem = {
        id: passage.id,
        content: passage.content,
        distance: ranked.distance ?? distances.get(passage.id)!,
        collectionId: passage.collectionId,
        fileId: passage.fileId,
        fileName: indexed.name(passage.fileId),
        chunkIndex: passage.index,
      };
      if (passage.page !== null) item.page = passage.page;
      if (ranked.rerankScore !== undefined) item.rerankScore = ranked.rerankScore;
      result.push(item);
    }
    return result;
  }

  /**
   * A passage only BM25 found has no distance from the index; it gets the cosine distance from the
   * query's vector (the one the index was asked with) to its nearest stored window, the distance a
   * vector search gives it, so every result carries a real distance. The windows' vectors are read
   * back from the index, never embedded again: hybrid search costs one embedder call, the query's.
   */
  private async distancesOfKeywordOnly(
    ranking: RankedPassage[],
    passages: Map<string, Passage>,
    query: Float32Array,
  ): Promise<Map<string, number>> {
    const missing = ranking.filter((r) => r.distance === undefined && passages.has(r.passageId));
    const distances = new Map<string, number>();
    if (missing.length === 0) return distances;
    const stored = await this.storedVectors(missing);
    for (const { passageId } of missing) {
      const windows = stored.get(passageId);
      // No window left (the file was deleted since BM25 answered): as far as a distance goes.
      distances.set(passageId, windows ? nearestDistance(query, windows) : 2);
    }
    return distances;
  }
}

/** Which files are `indexed`, and their names; looked up once per file per search, even by concurrent rankings. */
class IndexedFiles {
  /** File id -> its name when indexed, null otherwise. */
  private readonly lookups = new Map<string, Promise<string | null>>();
  private readonly names = new Map<string, string>();

  constructor(private readonly files: FileStore) {}

  async keep<T extends { fileId: string }>(items: T[]): Promise<T[]> {
    const fileIds = [...new Set(items.map((i) => i.fileId))];
    const unknown = fileIds.filter((id) => !this.lookups.has(id));
    if (unknown.length) {
      const found = this.files.getMany(unknown).then((files) => new Map(files.map((f) => [f.id, f])));
      for (const id of unknown) {
        this.lookups.set(
          id,
          found.then((files) => {
            const file = files.get(id);
            return file?.status === 'indexed' ? file.name : null;
          }),
        );
      }
    }
    const names = await Promise.all(fileIds.map((id) => this.lookups.get(id)!));
    fileIds.forEach((id, i) => {
      const name = names[i];
      if (name !== null) this.names.set(id, name);
    });
    return items.filter((item) => this.names.has(item.fileId));
  }

  name(fileId: string): string {
    return this.names.get(fileId) ?? '';
  }
}

/** One collection's part of a search. */
interface CollectionSearch {
  collectionId: string;
  query: Float32Array;
  text: string;
  /** Passages wanted from this collection. */
  depth: number;
  /** The files a filter keeps; undefined without a filter. */
  scope?: UnitFilter;
  perFile?: number;
  indexed: IndexedFiles;
}

/**
 * Both doors check a search with SearchDto, but workflow nodes call the service directly: it checks
 * with the same class, so a rule and its message are written once. The text comes back trimmed.
 * @throws AppError VALIDATION_FAILED naming each bad field (`top_k` as the REST API spells it)
 */
function checkedInput(input: SearchInput): CheckedInput {
  const { rerank } = input;
  const dto = validateInput(SearchOptionsDto, {
    text: input.text,
    top_k: input.topK,
    offset: input.offset,
    mode: input.mode,
    filter: input.filter,
    per_file: input.perFile,
    mmr_lambda: input.mmrLambda,
    min_score: input.minScore,
    ...(rerank
      ? {
          rerank: {
            enabled: rerank.enabled,
            top_n: rerank.topN,
            url: rerank.url,
            kind: rerank.kind,
            model: rerank.model,
            credential_id: rerank.credentialId,
          } satisfies Record<keyof RerankDto, unknown>,
        }
      : {}),
  });
  return {
    text: dto.text,
    topK: dto.top_k ?? DEFAULT_TOP_K,
    offset: dto.offset ?? 0,
    mode: dto.mode ?? 'vector',
    filter: dto.filter === undefined ? undefined : parseFileFilter(dto.filter),
    perFile: dto.per_file,
    mmrLambda: dto.mmr_lambda,
    minScore: dto.min_score,
    ...(dto.rerank ? { rerank: rerankInput(dto.rerank) } : {}),
  };
}
