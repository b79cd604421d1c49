// The ranking steps of a search that need no store: hits collapsed to passages, the per-file cap,
// reciprocal rank fusion, and maximal marginal relevance over vectors already read.
import { cosineDistance, l2Normalize } from '../embeddings/vectors';

/** The constant of reciprocal rank fusion; 60 is the value of the original paper and common practice. */
const RRF_K = 60;

export interface RankedPassage {
  passageId: string;
  fileId: string;
  collectionId: string;
  /** Undefined for a passage only keyword search found. */
  distance?: number;
  rerankScore?: number;
}
/** Hits arrive best first; the first hit of a passage is its best. */
export function firstPerPassage<T extends { passageId: string; fileId: string; distance?: number }>(
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
export function capPerFile(ranking: RankedPassage[], cap: number | undefined): RankedPassage[] {
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
export function fuse(rankings: RankedPassage[][]): RankedPassage[] {
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
 * Maximal marginal relevance over `pool`, the ranking's first candidates: each next passage is the
 * one with the best `lambda * relevance - (1 - lambda) * (closest similarity to a passage chosen)`.
 * Relevance is `relevanceOf` the passage, by default 1 - its distance (the one its result carries);
 * similarity is the cosine of two passages' vectors, each the mean direction of its `stored`
 * windows. A passage without stored windows is left out; a keyword-only passage gets its distance
 * from the query here.
 */
export function maximalMarginalRelevance(
  pool: RankedPassage[],
  stored: Map<string, Float32Array[]>,
  query: Float32Array,
  lambda: number,
  wanted: number,
  relevanceOf: (passage: RankedPassage & { distance: number }) => number = (passage) => 1 - passage.distance,
): RankedPassage[] {
  // Keyword-only passages get their distance here, once, for their results too.
  const candidates = pool
    .filter((r) => stored.has(r.passageId))
    .map((r) => ({ ...r, distance: r.distance ?? nearestDistance(query, stored.get(r.passageId)!) }));
  if (candidates.length < 2) return candidates;
  const vectors = candidates.map((r) => meanDirection(stored.get(r.passageId)!));
  const relevance = candidates.map(relevanceOf);
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

/**
 * The reranker's scores of `scored` as relevance on the scale MMR compares with similarity: 0 for
 * the lowest, 1 for the highest (1 for all when they tie). Scales differ between rerankers; ranks
 * and gaps between scores are what MMR weighs.
 */
export function rerankRelevance(scored: RankedPassage[]): (passage: RankedPassage) => number {
  const scores = scored.map((r) => r.rerankScore!);
  const low = Math.min(...scores);
  const span = Math.max(...scores) - low;
  return (passage) => (span > 0 ? (passage.rerankScore! - low) / span : 1);
}

/** The cosine distance from `query` to the nearest of `windows`. */
export function nearestDistance(query: Float32Array, windows: Float32Array[]): number {
  return Math.min(...windows.map((window) => cosineDistance(query, window)));
}

/** The mean of the windows' unit vectors: the direction of the passage as a whole. */
function meanDirection(windows: Float32Array[]): Float32Array {
  const mean = new Float32Array(windows[0].length);
  for (const window of windows) {
    const unit = l2Normalize(window);
    for (let i = 0; i < mean.length; i++) mean[i] += unit[i];
  }
  return mean;
}
