import { AppError, ErrorCode } from '../../src/common/app-error';
import { Embedder } from '../../src/domain/embedder.port';
import { LocalEmbedder } from '../../src/embeddings/local/local-embedder.adapter';
import { OpenAiCompatibleEmbedder } from '../../src/embeddings/openai-compatible/openai-embedder.adapter';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';

/** The promises of the Embedder port, held by every adapter. */
function embedderContract(name: string, open: () => Promise<{ embedder: Embedder; close(): Promise<void> }>) {
  describe(`Embedder contract: ${name}`, () => {
    let embedder: Embedder;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ embedder, close } = await open());
    });
    afterAll(() => close());

    it('answers no vectors for no texts', async () => {
      await expect(embedder.embed([])).resolves.toEqual([]);
    });

    it('answers one vector of `dimension` numbers per text, each of unit length', async () => {
      const vectors = await embedder.embed(sentences(5));
      expect(vectors).toHaveLength(5);
      expect(embedder.dimension).toBeGreaterThan(0);
      for (const vector of vectors) {
        expect(vector).toBeInstanceOf(Float32Array);
        expect(vector).toHaveLength(embedder.dimension);
        expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-4);
      }
    });

    it('keeps the order of the texts', async () => {
      const texts = sentences(6);
      const forward = await embedder.embed(texts);
      const backward = await embedder.embed([...texts].reverse());
      backward.reverse();
      texts.forEach((_, i) => expect(maxDifference(forward[i], backward[i])).toBeLessThan(1e-5));
      // Distinct texts get distinct vectors, so equal pairs above are not a degenerate answer.
      expect(maxDifference(forward[0], forward[1])).toBeGreaterThan(1e-3);
    });

    it('gives a text the vector embedQuery gives it, wherever it sits in a call larger than one batch', async () => {
      const texts = sentences(200);
      const vectors = await embedder.embed(texts);
      expect(vectors).toHaveLength(200);
      for (const i of [0, 7, 8, 95, 96, 97, 150, 199]) {
        expect(maxDifference(vectors[i], await embedder.embedQuery(texts[i]))).toBeLessThan(1e-5);
      }
    });

    it('embeds an empty string anywhere in a call without shifting the others', async () => {
      const texts = sentences(3);
      const alone = await embedder.embed(texts);
      const withEmpty = await embedder.embed([texts[0], '', texts[1], texts[2], '']);
      expect(withEmpty).toHaveLength(5);
      expect(maxDifference(withEmpty[0], alone[0])).toBeLessThan(1e-5);
      expect(maxDifference(withEmpty[2], alone[1])).toBeLessThan(1e-5);
      expect(maxDifference(withEmpty[3], alone[2])).toBeLessThan(1e-5);
      expect(withEmpty[4]).toHaveLength(embedder.dimension);
      expect(Math.abs(norm(withEmpty[4]) - 1)).toBeLessThan(1e-4);
    });

    it('embeds calls made only of empty strings', async () => {
      const [alone] = await embedder.embed(['']);
      expect(Math.abs(norm(alone) - 1)).toBeLessThan(1e-4);
      const many = await embedder.embed(Array(20).fill(''));
      many.forEach((vector) => expect(maxDifference(vector, alone)).toBeLessThan(1e-5));
    });

    it('rejects a canceled call with CANCELED and stays usable', async () => {
      const early = new AbortController();
      early.abort();
      await expect(embedder.embed(sentences(2), { signal: early.signal })).rejects.toMatchObject({ code: ErrorCode.CANCELED });

      const late = new AbortController();
      const call = embedder.embed(sentences(40), { signal: late.signal });
      late.abort();
      await expect(call).rejects.toMatchObject({ code: ErrorCode.CANCELED });

      await expect(embedder.embed(sentences(3))).resolves.toHaveLength(3);
    });

    it("rejects with the signal's reason when it is an AppError", async () => {
      const timedOut = new AbortController();
      timedOut.abort(new AppError(ErrorCode.TIMEOUT, 'run timed out'));
      await expect(embedder.embedQuery('anything', { signal: timedOut.signal })).rejects.toMatchObject({ code: ErrorCode.TIMEOUT });
    });
  });
}

embedderContract('LocalEmbedder', async () => {
  const embedder = new LocalEmbedder({ threads: 2 });
  return { embedder, close: () => embedder.close() };
});

embedderContract('OpenAiCompatibleEmbedder', async () => {
  const server = await FakeEmbeddingsServer.start({ dimension: 64, apiKey: 'test-key' });
  const embedder = new OpenAiCompatibleEmbedder({ url: server.url, apiKey: 'test-key', model: 'fake-embedding-model' });
  return {
    embedder,
    close: async () => {
      await embedder.close();
      await server.close();
    },
  };
});

const SUBJECTS = ['The committee', 'A hiker', 'Our support team', 'The old lighthouse', 'Every invoice', 'The chef'];
const VERBS = ['reviewed', 'photographed', 'answered', 'guarded', 'listed', 'seasoned'];
const OBJECTS = ['the budget', 'a glacier at dawn', 'forty tickets', 'the harbour', 'unpaid items', 'a pot of soup'];
const TAILS = ['', ' before lunch', ' despite the heavy rain and the late hour', ' for the third time this week, as usual'];

/** Distinct, sentence-like texts of varied length. */
function sentences(count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `${SUBJECTS[i % 6]} ${VERBS[(i >> 1) % 6]} ${OBJECTS[(i >> 2) % 6]}${TAILS[i % 4]} (note ${i}).`,
  );
}

function norm(vector: Float32Array): number {
  return Math.hypot(...vector);
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  expect(a).toHaveLength(b.length);
  return a.reduce((max, value, i) => Math.max(max, Math.abs(value - b[i])), 0);
}
