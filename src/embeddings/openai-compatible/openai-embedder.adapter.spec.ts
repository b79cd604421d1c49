import { AppError, ErrorCode } from '../../common/app-error';
import { parseRetryAfter } from '../../common/retrying-json-client';
import { OpenAiCompatibleEmbedder, type OpenAiCompatibleEmbedderOptions } from './openai-embedder.adapter';
import { FakeEmbeddingsServer } from '../../../test/utils/fake-embeddings-server';

describe('OpenAiCompatibleEmbedder', () => {
  let server: FakeEmbeddingsServer;
  let sleeps: number[];
  const open: OpenAiCompatibleEmbedder[] = [];

  /** A client of the fake server that records its waits instead of waiting. */
  const client = (options: Partial<OpenAiCompatibleEmbedderOptions> = {}) => {
    const embedder = new OpenAiCompatibleEmbedder({
      url: server.url,
      model: 'fake-model',
      backoff: { initialMs: 10, maxMs: 40 },
      sleep: async (ms) => void sleeps.push(ms),
      ...options,
    });
    open.push(embedder);
    return embedder;
  };
  const texts = (count: number, length = 20) => Array.from({ length: count }, (_, i) => `text ${i} `.padEnd(length, 'x'));

  beforeEach(async () => {
    server = await FakeEmbeddingsServer.start({ dimension: 16 });
    sleeps = [];
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
    await server.close();
  });

  describe('requests', () => {
    it('posts the model and inputs to /v1/embeddings, with the API key as a bearer token', async () => {
      await client({ apiKey: 'sk-test' }).embed(['hello', 'world']);
      expect(server.requests).toHaveLength(1);
      const [request] = server.requests;
      expect(request).toMatchObject({ method: 'POST', path: '/v1/embeddings', body: { model: 'fake-model', input: ['hello', 'world'] } });
      expect(request.headers.authorization).toBe('Bearer sk-test');
    });

    it('sends no authorization header without a key', async () => {
      await client().embed(['hello']);
      expect(server.requests[0].headers.authorization).toBeUndefined();
    });

    it.each(['/v1', '/v1/', '/'])('accepts the base URL ending in %p', async (suffix) => {
      await client({ url: server.url + suffix }).embed(['hello']);
      expect(server.requests[0].path).toBe('/v1/embeddings');
    });

    it('sends nothing for no texts', async () => {
      await expect(client().embed([])).resolves.toEqual([]);
      expect(server.requests).toHaveLength(0);
    });

    it('splits a large call into requests of at most 96 inputs, in order', async () => {
      const input = texts(200);
      const vectors = await client().embed(input);
      expect(server.requests.map((r) => (r.body?.input as string[]).length)).toEqual([96, 96, 8]);
      expect(server.requests.flatMap((r) => r.body?.input)).toEqual(input);
      expect(vectors).toHaveLength(200);
    });

    it('keeps each request within the character budget', async () => {
      await client({ maxBatchChars: 100 }).embed(texts(5, 40));
      expect(server.requests.map((r) => (r.body?.input as string[]).length)).toEqual([2, 2, 1]);
    });

    it('sends a text longer than the budget on its own', async () => {
      await client({ maxBatchChars: 100 }).embed(['short', 'y'.repeat(150), 'short']);
      expect(server.requests.map((r) => (r.body?.input as string[]).length)).toEqual([1, 1, 1]);
    });
  });

  describe('dimension', () => {
    it('is learned from the first answer', async () => {
      const embedder = client();
      expect(embedder.dimension).toBe(0);
      await embedder.warmUp();
      expect(embedder.dimension).toBe(16);
    });

    it('rejects an answer of another dimension than before', async () => {
      const embedder = client();
      await embedder.embed(['first']);
      server.dimension = 8;
      await expect(embedder.embed(['second'])).rejects.toMatchObject({
        code: ErrorCode.EMBEDDING_MISMATCH,
        retryable: false,
        details: { expected: 16, got: 8 },
      });
      expect(embedder.dimension).toBe(16);
      expect(server.requests).toHaveLength(2);
    });

    it('rejects an answer of another dimension than configured', async () => {
      await expect(client({ dimension: 1536 }).embed(['first'])).rejects.toMatchObject({ code: ErrorCode.EMBEDDING_MISMATCH });
    });
  });

  describe('retries', () => {
    it('waits as long as Retry-After says after a 429, then succeeds', async () => {
      server.answerNext({ status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'Rate limit reached' } } });
      await expect(client().embed(['hello'])).resolves.toHaveLength(1);
      expect(server.requests).toHaveLength(2);
      expect(sleeps).toEqual([2000]);
    });

    it('retries 5xx with exponential backoff and jitter, then fails retryable after 5 attempts', async () => {
      server.answerNext(...Array(5).fill({ status: 500, body: { error: { message: 'upstream exploded' } } }));
      const error = await client()
        .embed(['hello'])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ code: ErrorCode.EMBEDDING_FAILED, retryable: true });
      expect((error as Error).message).toMatch(/500: upstream exploded.*5 attempts/);
      expect(server.requests).toHaveLength(5);
      expect(sleeps).toHaveLength(4);
      const ceilings = [10, 20, 40, 40];
      sleeps.forEach((ms, i) => {
        expect(ms).toBeGreaterThanOrEqual(ceilings[i] / 2);
        expect(ms).toBeLessThanOrEqual(ceilings[i]);
      });
    });

    it('retries a dropped connection and a 503', async () => {
      server.answerNext({ dropConnection: true }, { status: 503, body: 'busy' });
      await expect(client().embed(['hello'])).resolves.toHaveLength(1);
      expect(server.requests).toHaveLength(3);
    });

    it('retries a request that gets no answer in time', async () => {
      server.answerNext({ hang: true });
      // Generous: the answered attempt must not itself run out of time on a loaded machine.
      await expect(client({ timeoutMs: 1500 }).embed(['hello'])).resolves.toHaveLength(1);
      expect(server.requests).toHaveLength(2);
    });

    it('gives up at once, retryable, when Retry-After is beyond what it will wait', async () => {
      server.answerNext({ status: 429, headers: { 'retry-after': '3600' } });
      await expect(client().embed(['hello'])).rejects.toMatchObject({
        code: ErrorCode.EMBEDDING_FAILED,
        retryable: true,
        details: { retryAfterMs: 3_600_000 },
      });
      expect(server.requests).toHaveLength(1);
    });

    it('does not retry a 400 and passes on the upstream message', async () => {
      server.answerNext({ status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens" } } });
      await expect(client().embed(['hello'])).rejects.toMatchObject({
        code: ErrorCode.EMBEDDING_FAILED,
        retryable: false,
        message: expect.stringContaining('maximum context length is 8192 tokens'),
        details: { status: 400 },
      });
      expect(server.requests).toHaveLength(1);
    });

    it('never repeats the API key an upstream message echoes', async () => {
      server.answerNext({ status: 401, body: { error: { message: 'Incorrect API key provided: sk-secret-123' } } });
      const error = (await client({ apiKey: 'sk-secret-123' })
        .embed(['hello'])
        .catch((e: unknown) => e)) as Error;
      expect(error.message).toContain('Incorrect API key provided');
      expect(error.message).not.toContain('sk-secret-123');
    });

    it('asks for base64 vectors, and asks without once the server refuses the option', async () => {
      server.answerNext({ status: 422, body: { error: { message: "encoding_format: unexpected value 'base64'" } } });
      const embedder = client();
      await expect(embedder.embed(['hello'])).resolves.toHaveLength(1);
      await embedder.embed(['again']);
      expect(server.requests.map((r) => (r.body as { encoding_format?: string } | undefined)?.encoding_format)).toEqual([
        'base64',
        undefined,
        undefined,
      ]);
    });

    it('stops the other requests of a call once one has failed', async () => {
      server.answerNext({ status: 400, body: { error: { message: 'bad' } } });
      await expect(client({ maxBatchSize: 1, concurrency: 1 }).embed(texts(5))).rejects.toMatchObject({ retryable: false });
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('answers', () => {
    it('decodes base64 vectors, and normalises them', async () => {
      const base64 = (values: number[]) => Buffer.from(Float32Array.from(values).buffer).toString('base64');
      server.answerNext({
        status: 200,
        body: {
          data: [
            { index: 1, embedding: base64([0, 2]) },
            { index: 0, embedding: base64([3, 4]) },
          ],
        },
      });
      const [first, second] = await client().embed(['a', 'b']);
      expect(Array.from(first)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
      expect(Array.from(second)).toEqual([0, 1]);
    });

    it("decodes one answer's base64 vectors side by side, each at its index, and one of another length alone", async () => {
      const base64 = (values: number[]) => Buffer.from(Float32Array.from(values).buffer).toString('base64');
      server.answerNext({
        status: 200,
        body: {
          data: [
            { index: 2, embedding: base64([0, 0, 5]) },
            { index: 0, embedding: base64([1, 0, 0]) },
            { index: 1, embedding: base64([0, 3, 0]) },
          ],
        },
      });
      const vectors = await client().embed(['a', 'b', 'c']);
      expect(vectors.map((v) => Array.from(v))).toEqual([
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
      ]);
      // One array for the answer, the vectors in index order: the index stores two as one row without a copy.
      expect(new Set(vectors.map((v) => v.buffer)).size).toBe(1);
      expect(vectors.map((v) => v.byteOffset)).toEqual([0, 12, 24]);

      server.answerNext({ status: 200, body: { data: [{ index: 0, embedding: base64([1, 0]) }] } });
      await expect(client({ dimension: 3 }).embed(['a'])).rejects.toMatchObject({ code: ErrorCode.EMBEDDING_MISMATCH });
    });

    it('rejects a base64 vector holding a component that is not finite', async () => {
      const base64 = (values: number[]) => Buffer.from(Float32Array.from(values).buffer).toString('base64');
      server.answerNext(
        { status: 200, body: { data: [{ index: 0, embedding: base64([1, NaN, 2]) }] } },
        { status: 200, body: { data: [{ index: 0, embedding: base64([Infinity, 0, 2]) }] } },
      );
      await expect(client().embed(['a'])).rejects.toMatchObject({ message: expect.stringContaining('not an array of numbers') });
      await expect(client().embed(['a'])).rejects.toMatchObject({ message: expect.stringContaining('not an array of numbers') });
    });

    it('rejects a base64 vector that is not whole floats', async () => {
      server.answerNext({ status: 200, body: { data: [{ index: 0, embedding: Buffer.from([1, 2, 3]).toString('base64') }] } });
      await expect(client().embed(['a'])).rejects.toMatchObject({ message: expect.stringContaining('not an array of numbers') });
    });

    it('rejects a body without a vector per input', async () => {
      server.answerNext({ status: 200, body: { data: [{ index: 0, embedding: [1, 2] }] } });
      await expect(client().embed(['a', 'b'])).rejects.toMatchObject({
        code: ErrorCode.EMBEDDING_FAILED,
        retryable: false,
        message: expect.stringContaining('1 embeddings for 2 inputs'),
      });
    });

    it('rejects repeated indexes and non-numeric embeddings', async () => {
      server.answerNext(
        {
          status: 200,
          body: {
            data: [
              { index: 0, embedding: [1] },
              { index: 0, embedding: [1] },
            ],
          },
        },
        { status: 200, body: { data: [{ index: 0, embedding: ['1'] }] } },
      );
      await expect(client().embed(['a', 'b'])).rejects.toMatchObject({ message: expect.stringContaining('repeated index 0') });
      await expect(client().embed(['a'])).rejects.toMatchObject({ message: expect.stringContaining('not an array of numbers') });
    });

    it('rejects a body that is not JSON', async () => {
      server.answerNext({ status: 200, body: '<html>proxy error</html>' });
      await expect(client().embed(['a'])).rejects.toMatchObject({ code: ErrorCode.EMBEDDING_FAILED, retryable: false });
    });
  });

  it('fails calls in flight and later calls once closed', async () => {
    server.answerNext({ hang: true });
    const embedder = client();
    const inFlight = expect(embedder.embed(['a'])).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await embedder.close();
    await inFlight;
    await expect(embedder.embed(['b'])).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
  });

  it('reads an HTTP date', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
