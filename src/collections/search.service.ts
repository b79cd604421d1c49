import { Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError } from '../common/app-error';
import { validateInput } from '../common/input-validation';
import { Embedder } from '../domain/embedder.port';
import { cosineDistance } from '../embeddings/vectors';
import { Metrics } from '../metrics/metrics.service';
import { CollectionStore } from '../domain/collection-store.port';
import { FileStore } from '../domain/file-store.port';
import { Passage } from '../domain/file.model';
import { FileFilter, parseFileFilter } from '../domain/file-filter';
import { DEFAULT_TOP_K, MAX_SEARCH_COLLECTIONS, SearchMode, SearchOptionsDto } from './search.dto';
import { MAX_FILTER_FILES, MAX_SEARCH_K, modelMismatch, UnitFilter, VectorIndex } from '../domain/vector-index.port';

export type { SearchMode };

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
}

/** Windows fetched per wanted passage: a passage has several windows, and near ones cluster. */
const UNITS_PER_PASSAGE = 4;
/**
 * Passages each ranking contributes to fusion at least. A fixed floor keeps the first pages of a
 * hybrid search in the same order whatever the offset.
 */
const HYBRID_MIN_DEPTH = 50;
/** The constant of reciprocal rank fusion; 60 is the value of the original paper and common practice. */
const RRF_K = 60;
/** Candidates maximal marginal relevance chooses from, beyond the passages wanted: each is embedded once. */
const MMR_EXTRA_CANDIDATES = 50;

interface RankedPassage {
  passageId: string;
  fileId: string;
  collectionId: string;
  /** Undefined for a passage only keyword search found. */
  distance?: number;
}

type CheckedInput = Required<Omit<SearchInput, 'filter' | 'perFile' | 'mmrLambda' | 'minScore'>> &
  Pick<SearchInput, 'perFile' | 'mmrLambda' | 'minScore'> & { filter?: FileFilter };

/**
 * Semantic search over the passages of one collection or several. The query is embedded once; the
 * index returns the nearest embedded windows, which collapse to distinct passages with their best
 * distance, and `offset`/`topK` page over those passages. Hybrid mode fuses that ranking with
 * BM25's by reciprocal rank. Only files in status `indexed` are searched, and of those only the
 * ones a filter keeps: the file store resolves the filter to file ids, which the index takes as
 * its file filter. Across collections, each collection is ranked on its own and the rankings are
 * fused by reciprocal rank, so a large collection's many near passages cannot crowd out the best
 * match of a small one.
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly access: AccessPolicy,
    private readonly collections: CollectionStore,
    private readonly files: FileStore,
    private readonly index: VectorIndex,
    private readonly embedder: Embedder,
    private readonly metrics: Metrics,
  ) {}

  async search(principal: Principal, collectionId: string, input: SearchInput): Promise<{ result: SearchResultItem[] }> {
    await this.access.require(principal, 'collection', collectionId, 'viewer');
    return this.run([collectionId], checkedInput(input));
  }

  /**
   * One search over several collections. Every named collection is checked before any is searched:
   * one the caller cannot read fails the whole search, naming it.
   */
  async searchMany(principal: Principal, target: SearchTarget, input: SearchInput): Promise<{ result: SearchResultItem[] }> {
    const checked = checkedInput(input);
    const collectionIds = await this.targets(principal, target);
    return this.run(collectionIds, checked);
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

  private async run(collectionIds: readonly string[], input: CheckedInput): Promise<{ result: SearchResultItem[] }> {
    const { text, topK, offset, mode, filter, perFile, mmrLambda, minScore } = input;
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
    const depth = mmrLambda === undefined ? wanted : wanted + MMR_EXTRA_CANDIDATES;
    const query = await this.embedder.embedQuery(text);
    const indexed = new IndexedFiles(this.files);
    const rankings = await Promise.all(
      searchable.map(async (collectionId) => {
        const scope = filter ? await this.filteredFiles(collectionId, filter) : undefined;
        if (scope && scope.fileIds.length === 0) return [];
        const search: CollectionSearch = { collectionId, query, text, depth, scope, perFile, indexed };
        return mode === 'hybrid' ? this.hybridPassages(search) : this.nearestPassages(search, depth);
      }),
    );
    let ranking = rankings.length === 1 ? rankings[0] : fuse(rankings);
    if (mmrLambda !== undefined && mmrLambda < 1) ranking = await this.diversify(ranking, query, mmrLambda, wanted);
    let result = await this.hydrate(ranking.slice(offset, wanted), query, indexed);
    if (minScore !== undefined) result = result.filter((hit) => 1 - hit.distance >= minScore);
    this.metrics.search(mode, (performance.now() - started) / 1000);
    return { result };
  }

  /** The ids of the indexed files the filter keeps, as the index's file filter; refused past what the index takes. */
  private async filteredFiles(collectionId: string, filter: FileFilter): Promise<UnitFilter> {
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
   * Maximal marginal relevance over the ranking's first candidates: each next passage is the one
   * with the best `lambda * relevance - (1 - lambda) * (closest similarity to a passage chosen)`,
   * similarities being cosines of the passages' own embeddings (one embedder call for the pool).
   * The passages past the pool follow in their order.
   */
  private async diversify(ranking: RankedPassage[], query: Float32Array, lambda: number, wanted: number): Promise<RankedPassage[]> {
    const pool = ranking.slice(0, wanted + MMR_EXTRA_CANDIDATES);
    const passages = new Map((await this.files.getPassages(pool.map((r) => r.passageId))).map((p) => [p.id, p]));
    const candidates = pool.filter((r) => passages.has(r.passageId));
    if (candidates.length < 2) return candidates;
    const vectors = await this.embedder.embed(candidates.map((r) => passages.get(r.passageId)!.content));
    const relevance = vectors.map((v) => 1 - cosineDistance(query, v));
    const closest = new Array<number>(candidates.length).fill(-Infinity);
    const chosen: RankedPassage[] = [];
    const left = new Set(candidates.keys());
    while (left.size > 0 && chosen.length < wanted) {
      let best = -1;
      let bestScore = -Infinity;
      for (const i of left) {
        const score = lambda * relevance[i] - (1 - lambda) * (closest[i] === -Infinity ? 0 : closest[i]);
        if (score > bestScore) [best, bestScore] = [i, score];
      }
      left.delete(best);
      chosen.push(candidates[best]);
      for (const i of left) closest[i] = Math.max(closest[i], 1 - cosineDistance(vectors[i], vectors[best]));
    }
    return chosen;
  }

  private async hydrate(ranking: RankedPassage[], query: Float32Array, indexed: IndexedFiles): Promise<SearchResultItem[]> {
    const passages = new Map((await this.files.getPassages(ranking.map((r) => r.passageId))).map((p) => [p.id, p]));
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
      result.push(item);
    }
    return result;
  }

  /**
   * A passage only BM25 found has no distance from the index; it gets its own cosine distance to
   * the query's vector (the one the index was asked with), so every result carries a real distance.
   * Costs one embedder call for those passages, in hybrid mode only.
   */
  private async distancesOfKeywordOnly(
    ranking: RankedPassage[],
    passages: Map<string, Passage>,
    query: Float32Array,
  ): Promise<Map<string, number>> {
    const missing = ranking.filter((r) => r.distance === undefined && passages.has(r.passageId)).map((r) => passages.get(r.passageId)!);
    const distances = new Map<string, number>();
    if (missing.length === 0) return distances;
    const vectors = await this.embedder.embed(missing.map((p) => p.content));
    missing.forEach((passage, i) => distances.set(passage.id, cosineDistance(query, vectors[i])));
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

/** Hits arrive best first; the first hit of a passage is its best. */
function firstPerPassage<T extends { passageId: string; fileId: string; distance?: number }>(
  collectionId: string,
  hits: T[],
): RankedPassage[] {
  const seen = new Set<string>();
  const ranking: RankedPassage[] = [];
  for (const hit of hits) {
    if (seen.has(hit.passageId)) continue;
    seen.add(hit.passageId);
    ranking.push({ passageId: hit.passageId, fileId: hit.fileId, collectionId, distance: hit.distance });
  }
  return ranking;
}

/** The ranking without the passages of a file past its first `cap`. */
function capPerFile(ranking: RankedPassage[], cap: number | undefined): RankedPassage[] {
  if (cap === undefined) return ranking;
  const counts = new Map<string, number>();
  return ranking.filter((p) => {
    const count = (counts.get(p.fileId) ?? 0) + 1;
    counts.set(p.fileId, count);
    return count <= cap;
  });
}

/**
 * Reciprocal rank fusion of rankings (vector and keyword of one collection, or the rankings of
 * several collections): a passage scores the sum of 1 / (RRF_K + rank) over the rankings it is in,
 * so only ranks count, never scores of different scales. Ties go to the smaller vector distance,
 * then to the passage id for a stable order.
 */
function fuse(rankings: RankedPassage[][]): RankedPassage[] {
  const fused = new Map<string, RankedPassage & { score: number }>();
  for (const ranking of rankings) {
    ranking.forEach((p, rank) => {
      const existing = fused.get(p.passageId);
      if (!existing) fused.set(p.passageId, { ...p, score: 1 / (RRF_K + rank + 1) });
      else {
        existing.score += 1 / (RRF_K + rank + 1);
        existing.distance ??= p.distance;
      }
    });
  }
  return [...fused.values()].sort(
    (a, b) =>
      b.score - a.score ||
      (a.distance ?? Infinity) - (b.distance ?? Infinity) ||
      (a.passageId < b.passageId ? -1 : a.passageId > b.passageId ? 1 : 0),
  );
}

/**
 * Both doors check a search with SearchDto, but workflow nodes call the service directly: it checks
 * with the same class, so a rule and its message are written once. The text comes back trimmed.
 * @throws AppError VALIDATION_FAILED naming each bad field (`top_k` as the REST API spells it)
 */
function checkedInput(input: SearchInput): CheckedInput {
  const dto = validateInput(SearchOptionsDto, {
    text: input.text,
    top_k: input.topK,
    offset: input.offset,
    mode: input.mode,
    filter: input.filter,
    per_file: input.perFile,
    mmr_lambda: input.mmrLambda,
    min_score: input.minScore,
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
  };
}
