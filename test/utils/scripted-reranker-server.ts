import { ReceivedJsonRequest, ScriptedJsonServer, WrittenAnswer } from './scripted-json-server';

type RerankBody = { model?: unknown; query?: unknown; documents?: unknown; texts?: unknown; top_n?: unknown };
type ReceivedRequest = ReceivedJsonRequest<RerankBody>;
export type RerankerShape = 'cohere' | 'jina' | 'tei';

/** Words of two letters or more, lower case; what the scorer compares. */
const terms = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? [];

/** Words too common to say anything about relevance. */
const STOP = new Set(
  'the of and to in is was a an on at by for with as from that this it its be are were which who what where when how did does do has had have or not'.split(
    ' ',
  ),
);

/**
 * A real cross-scorer, if a plain one: BM25 of the query's terms over the documents of one request
 * (term frequency saturated with k1 = 1.2, length-normalised with b = 0.75, idf from those
 * documents). It reads the query and the passage together, as a cross-encoder does, and nothing of
 * the vectors: the benchmark's "reranked" figures measure what such a second opinion adds.
 */
export function termOverlapScores(query: string, documents: string[]): number[] {
  const wanted = [...new Set(terms(query).filter((t) => !STOP.has(t)))];
  const docs = documents.map(terms);
  const average = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length);
  const df = new Map(wanted.map((t) => [t, docs.filter((d) => d.includes(t)).length]));
  return docs.map((doc) => {
    const tf = new Map<string, number>();
    for (const term of doc) tf.set(term, (tf.get(term) ?? 0) + 1);
    let score = 0;
    for (const term of wanted) {
      const f = tf.get(term) ?? 0;
      if (!f) continue;
      const idf = Math.log(1 + (docs.length - df.get(term)! + 0.5) / (df.get(term)! + 0.5));
      score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * doc.length) / Math.max(1, average)));
    }
    return Math.round(score * 1e6) / 1e6;
  });
}

/**
 * A `/rerank` endpoint on 127.0.0.1 speaking one of the three shapes (Cohere v2, Jina, TEI) and
 * scoring with termOverlapScores. It checks the request as the real ones do (a query, the
 * documents under the shape's name, the bearer key when given) and can be scripted to fail
 * (`answerNext`). Cohere and Jina answers are cut to `top_n`; TEI answers every text.
 */
export class ScriptedRerankerServer extends ScriptedJsonServer<RerankBody> {
  private constructor(
    readonly shape: RerankerShape,
    private readonly apiKey?: string,
  ) {
    super();
  }

  static start(shape: RerankerShape, options: { apiKey?: string } = {}): Promise<ScriptedRerankerServer> {
    return new ScriptedRerankerServer(shape, options.apiKey).listen();
  }

  /** The URL of its rerank operation. */
  get endpoint(): string {
    return `${this.url}${this.shape === 'cohere' ? '/v2/rerank' : this.shape === 'jina' ? '/v1/rerank' : '/rerank'}`;
  }

  protected answer({ method, path, headers, body }: ReceivedRequest): WrittenAnswer {
    const error = (status: number, message: string) => ({ status, body: { message } });
    if (method !== 'POST' || path !== new URL(this.endpoint).pathname) return error(404, `No route ${method} ${path}`);
    if (this.apiKey && headers.authorization !== `Bearer ${this.apiKey}`) return error(401, 'invalid api token');
    const documents = this.shape === 'tei' ? body?.texts : body?.documents;
    if (typeof body?.query !== 'string' || !Array.isArray(documents) || !documents.every((d) => typeof d === 'string')) {
      return error(422, `query and ${this.shape === 'tei' ? 'texts' : 'documents'} are required`);
    }
    const ranked = termOverlapScores(body.query, documents as string[])
      .map((score, index) => ({ index, score }))
      .sort((a, b) => b.score - a.score || a.index - b.index);
    if (this.shape === 'tei') return { status: 200, body: ranked };
    const topN = typeof body.top_n === 'number' ? body.top_n : ranked.length;
    const results = ranked.slice(0, topN).map(({ index, score }) => ({ index, relevance_score: score }));
    return {
      status: 200,
      body: this.shape === 'cohere' ? { id: 'scripted', results, meta: {} } : { model: body.model, results, usage: {} },
    };
  }
}
