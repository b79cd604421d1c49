import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../../common/app-error';
import { LocalEmbedder } from './local-embedder.adapter';

describe('LocalEmbedder with the real model', () => {
  const embedder = new LocalEmbedder({ threads: 1 });
  afterAll(() => embedder.close());

  it('places a question nearer to a sentence on its topic than to an unrelated one', async () => {
    const [question, bread, volcano] = await embedder.embed([
      'How do I bake bread?',
      'Mix flour, water, yeast and salt, let the dough rise, then bake the loaf in a hot oven.',
      'The volcano erupted overnight, covering nearby villages in ash.',
    ]);
    expect(dot(question, bread)).toBeGreaterThan(dot(question, volcano) + 0.1);
  });

  it('embeds a very long text as its first 4,000 characters instead of stalling a thread', async () => {
    const page = 'Rivers carry sediment from the mountains to the sea, shaping valleys along the way. ';
    const long = page.repeat(1200); // ~100,000 characters: minutes of tokenizing if not cut
    const [whole, prefix] = await embedder.embed([long, long.slice(0, 4000)]);
    expect(dot(whole, prefix)).toBeCloseTo(1, 5);
  });

  it('loads its models on warmUp and embeds afterwards', async () => {
    await embedder.warmUp();
    await expect(embedder.embedQuery('ready')).resolves.toHaveLength(512);
  });
});

/*
 * The pool's behaviour is tested with a fake worker speaking the same protocol: it answers at once
 * and can crash on demand. Each vector spells its text in char codes, followed by the number of
 * the batch within that worker and the batch's size, so a test can read how work was split.
 */
const FAKE_WORKER = `
let batches = 0;
module.exports = async ({ texts }) => {
  if (texts.length === 0) return { vectors: [] };
  batches++;
  if (texts.includes('exit')) process.exit(3);
  if (texts.includes('throw')) {
    setImmediate(() => { throw new Error('kaboom'); });
    return new Promise(() => {});
  }
  if (texts.includes('fail')) return { error: 'bad input' };
  const vectors = texts.map((text) => {
    const v = new Float32Array(512);
    [...text].forEach((c, i) => (v[i] = c.charCodeAt(0)));
    v[510] = batches;
    v[511] = texts.length;
    return v;
  });
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { vectors };
};
`;

describe('LocalEmbedder worker pool', () => {
  let dir: string;
  let workerPath: string;
  const open: LocalEmbedder[] = [];
  const pool = (threads: number, batchSize?: number) => {
    const embedder = new LocalEmbedder({ threads, batchSize, workerPath });
    open.push(embedder);
    return embedder;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'embed-worker-'));
    workerPath = join(dir, 'fake.worker.js');
    writeFileSync(workerPath, FAKE_WORKER);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('batches texts of similar length together and answers in the callers order', async () => {
    const texts = ['eeeee', 'a', 'dddd', 'bb', 'ffffff', 'ccc'];
    const vectors = await pool(1, 3).embed(texts);
    expect(vectors.map(textOf)).toEqual(texts);
    const batchOf = Object.fromEntries(texts.map((t, i) => [t, vectors[i][510]]));
    expect(batchOf).toEqual({ a: 1, bb: 1, ccc: 1, dddd: 2, eeeee: 2, ffffff: 2 });
    expect(vectors.every((v) => v[511] === 3)).toBe(true);
  });

  it('spreads a small call over every thread', async () => {
    const vectors = await pool(2, 8).embed(['a', 'b', 'c', 'd', 'e', 'f']);
    // Two batches of three, each the first batch of its own worker.
    expect(vectors.map((v) => [v[510], v[511]])).toEqual(Array(6).fill([1, 3]));
  });

  it('lets a query take its turn between the batches of a large call', async () => {
    const embedder = pool(1, 1);
    const ingestion = embedder.embed(['a1', 'a2', 'a3', 'a4', 'a5']);
    const query = embedder.embedQuery('q');
    const [batches, queryVector] = await Promise.all([ingestion, query]);
    expect(queryVector[510]).toBe(2);
    expect(batches.map((v) => v[510])).toEqual([1, 3, 4, 5, 6]);
  });

  it('alternates between two large calls', async () => {
    const embedder = pool(1, 1);
    const [first, second] = await Promise.all([embedder.embed(['a1', 'a2', 'a3']), embedder.embed(['b1', 'b2', 'b3'])]);
    expect(first.map((v) => v[510])).toEqual([1, 3, 5]);
    expect(second.map((v) => v[510])).toEqual([2, 4, 6]);
  });

  it('fails the call whose worker died, replaces the worker and goes on', async () => {
    const embedder = pool(1, 1);
    const error = await embedder.embed(['x', 'exit', 'y']).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.EMBEDDING_FAILED, retryable: true });
    expect((error as Error).message).toContain('exit code 3');
    const after = await embedder.embed(['fresh']);
    expect(textOf(after[0])).toBe('fresh');
    expect(after[0][510]).toBe(1); // counted by a new worker
  });

  it('fails the call whose worker threw, with the exception message', async () => {
    const embedder = pool(2, 1);
    const bystander = embedder.embed(['calm']);
    await expect(embedder.embed(['throw'])).rejects.toMatchObject({
      code: ErrorCode.EMBEDDING_FAILED,
      message: expect.stringContaining('kaboom'),
    });
    await expect(bystander).resolves.toHaveLength(1);
    await expect(embedder.embed(['again', 'and again'])).resolves.toHaveLength(2);
  });

  it('reports a failure the worker answered as not retryable', async () => {
    await expect(pool(1).embed(['fail'])).rejects.toMatchObject({
      code: ErrorCode.EMBEDDING_FAILED,
      retryable: false,
      message: expect.stringContaining('bad input'),
    });
  });

  it('drops the batches of a canceled call that have not started', async () => {
    const embedder = pool(1, 1);
    const controller = new AbortController();
    const canceled = embedder.embed(['c1', 'c2', 'c3', 'c4'], { signal: controller.signal });
    controller.abort();
    await expect(canceled).rejects.toMatchObject({ code: ErrorCode.CANCELED });
    // Only c1 had been sent; the next batch the worker sees is this one.
    expect((await embedder.embedQuery('next'))[510]).toBe(2);
  });

  it('rejects work after close, including work in flight', async () => {
    const embedder = pool(1, 1);
    const inFlight = expect(embedder.embed(['a', 'b'])).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
    await embedder.close();
    await inFlight;
    await expect(embedder.embed(['c'])).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
    await expect(embedder.warmUp()).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
    await expect(embedder.close()).resolves.toBeUndefined();
  });

  it('rejects a warm-up still loading when closed', async () => {
    const embedder = pool(2);
    const warming = expect(embedder.warmUp()).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
    await embedder.close();
    await warming;
  });

  it('reports a worker that cannot start from warmUp', async () => {
    const broken = join(dir, 'broken.worker.js');
    writeFileSync(broken, "throw new Error('no model here');");
    const embedder = new LocalEmbedder({ threads: 2, workerPath: broken });
    open.push(embedder);
    await expect(embedder.warmUp()).rejects.toMatchObject({
      code: ErrorCode.EMBEDDING_FAILED,
      message: expect.stringContaining('no model here'),
    });
  });
});

function textOf(vector: Float32Array): string {
  return String.fromCharCode(...vector.slice(0, 500).filter((c) => c > 0));
}

function dot(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, i) => sum + value * b[i], 0);
}
