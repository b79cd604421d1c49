/*
 * Whether search answers well (issue 28, section 5): nDCG@10 and recall@10 over the labeled set of
 * test/fixtures/retrieval (3,000 passages, 362 questions with graded judgments), for
 *   - vector: cosine ranking of the local sentence encoder (USE-lite, 512-d);
 *   - hybrid: that ranking fused with BM25 by reciprocal rank (reranking turned off);
 *   - reranked: hybrid, its top RERANK_TOP_N passages reordered by a reranker configured as an
 *     operator would (RERANK_URL, TEI shape), here a local scripted one on 127.0.0.1
 *     (test/utils/scripted-reranker-server.ts): a real cross-scorer, but a plain one, BM25 of the
 *     query's terms over the candidates, not a neural model. Its figures say what a second opinion
 *     of that kind adds; a real cross-encoder (Cohere, Jina, a TEI model) is expected to add more.
 *   - hybrid+mmr: hybrid (reranking off) with maximal marginal relevance, `mmr_lambda` 0.7.
 *
 * Ingestion goes through the services directly (test/bench/ingestion-kit.ts: the file store, the
 * ingestion job, the local embedder and the SQLite index, wired as the modules wire them), one file
 * per passage, named by the passage's id; searches through SearchService.search as the REST
 * controller calls it. Figures are ratios to the vector search of the same run.
 *
 *   npm run bench -- retrieval-quality      (BENCH_QUERIES=100 for a quicker, rougher run)
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { readLabeledSet } from '../fixtures/retrieval/labeled-set';
import { ScriptedRerankerServer } from '../utils/scripted-reranker-server';
import { OWNER, openPipeline, percentile, reporter } from './ingestion-kit';
import type { SearchInput } from '../../src/collections/search.service';

const report = reporter('retrieval-quality');
const K = 10;
const RERANK_TOP_N = 30;
/** Relevance weighs 0.7, diversity 0.3: a common setting that still ranks by relevance first. */
const MMR_LAMBDA = 0.7;
const INGEST_IN_FLIGHT = 8;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');

/** nDCG@k with gains 2^grade - 1, against the ideal order of the query's judgments. */
function ndcg(ranked: string[], judgments: Record<string, number>, k: number): number {
  const dcg = (grades: number[]) => grades.slice(0, k).reduce((sum, grade, i) => sum + (2 ** grade - 1) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(judgments).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((id) => judgments[id] ?? 0)) / ideal;
}

/** Share of the passages judged relevant (grade `atLeast` or more) found in the first k. */
function recall(ranked: string[], judgments: Record<string, number>, k: number, atLeast: number): number {
  const relevant = Object.entries(judgments).filter(([, grade]) => grade >= atLeast);
  const top = new Set(ranked.slice(0, k));
  return relevant.filter(([id]) => top.has(id)).length / relevant.length;
}

async function main(): Promise<void> {
  const set = readLabeledSet();
  // BENCH_QUERIES takes every n-th question, so that a shorter run still asks about every kind of entity.
  const stride = Math.max(1, Math.ceil(set.queries.length / Number(process.env.BENCH_QUERIES ?? set.queries.length)));
  const queries = set.queries.filter((_, i) => i % stride === 0);
  const reranker = await ScriptedRerankerServer.start('tei');
  const pipeline = await openPipeline({
    RERANK_URL: reranker.endpoint,
    RERANK_KIND: 'tei',
    RERANK_TOP_N: String(RERANK_TOP_N),
    RERANK_TIMEOUT_MS: '60000',
  });
  try {
    console.log(`# ${set.passages.length} passages, ${queries.length} queries; load ${load()}`);
    const collectionId = await pipeline.createCollection();
    const started = performance.now();
    const queue = [...set.passages];
    await Promise.all(
      Array.from({ length: INGEST_IN_FLIGHT }, async () => {
        for (let passage = queue.shift(); passage; passage = queue.shift()) {
          const file = await pipeline.addFile(collectionId, `${passage.id}.txt`, { bytes: Buffer.from(passage.text) });
          await pipeline.ingest(file);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`# ingested in ${seconds.toFixed(1)} s (${(set.passages.length / seconds).toFixed(0)} passages/s); load ${load()}`);

    const variants: [string, Pick<SearchInput, 'mode' | 'rerank' | 'mmrLambda'>][] = [
      ['vector', { mode: 'vector' }],
      ['hybrid', { mode: 'hybrid', rerank: { enabled: false } }],
      ['hybrid+mmr', { mode: 'hybrid', mmrLambda: MMR_LAMBDA, rerank: { enabled: false } }],
      ['reranked', { mode: 'hybrid' }],
    ];
    const figures = new Map<string, { ndcg: number; recall: number; answers: number; p50: number }>();
    for (const [name, options] of variants) {
      let ndcgSum = 0;
      let recallSum = 0;
      let answerSum = 0;
      const latencies: number[] = [];
      for (const query of queries) {
        const before = performance.now();
        const { result, rerank } = await pipeline.search.search(OWNER, collectionId, { text: query.text, topK: K, offset: 0, ...options });
        latencies.push(performance.now() - before);
        if (rerank && !rerank.applied) throw new Error(`the reranker failed: ${rerank.error}`);
        const ranked = result.map((hit) => hit.fileName.replace(/\.txt$/, ''));
        ndcgSum += ndcg(ranked, query.judgments, K);
        recallSum += recall(ranked, query.judgments, K, 1);
        answerSum += recall(ranked, query.judgments, K, 2);
      }
      const n = queries.length;
      const f = { ndcg: ndcgSum / n, recall: recallSum / n, answers: answerSum / n, p50: percentile(latencies, 50) };
      figures.set(name, f);
      // Each mode's lines as soon as it is measured, against the vector search measured first.
      const base = figures.get('vector')!;
      report(`ndcg@10 ${name}`, f.ndcg, 'score', base.ndcg);
      report(`recall@10 ${name}`, f.recall, 'share', base.recall);
      report(`answer recall@10 ${name}`, f.answers, 'share', base.answers);
      report(`search p50 ${name}`, f.p50, 'ms', base.p50);
      console.log(`# ${name} done; load ${load()}`);
    }
    console.log(`# load at the end ${load()}`);
  } finally {
    await pipeline.close();
    await reranker.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
