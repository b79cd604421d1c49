import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, ErrorCode } from './app-error';
import { openAiCompatibleUrl, RetryingJsonClient, type RetryingJsonClientOptions } from './retrying-json-client';

/** Long enough for any answer on loopback, however loaded the machine; each hung attempt costs it once. */
const ATTEMPT_LIMIT_MS = 1500;

type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | { hang: true };

interface Received {
  headers: IncomingHttpHeaders;
  body: unknown;
}

describe('RetryingJsonClient', () => {
  let server: Server;
  let endpoint: string;
  let script: Answer[];
  let received: Received[];
  let sleeps: number[];

  const client = (options: Partial<RetryingJsonClientOptions> = {}) =>
    new RetryingJsonClient({
      endpoint,
      errorCode: ErrorCode.UPSTREAM_FAILED,
      serverName: 'Test endpoint',
      timeoutMs: 5_000,
      maxAttempts: 3,
      backoff: { initialMs: 10, maxMs: 40 },
      maxRetryAfterMs: 10_000,
      sleep: async (ms) => void sleeps.push(ms),
      ...options,
    });
  const signal = new AbortController().signal;
  const answerNext = (...answers: Answer[]) => script.push(...answers);

  beforeEach(async () => {
    script = [];
    received = [];
    sleeps = [];
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        const answer = script.shift() ?? { status: 200, body: { ok: true } };
        if ('hang' in answer) return;
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? ''));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/things`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('posts the body as JSON with the key as a bearer token, and hands back the answer text', async () => {
    await expect(client({ apiKey: 'sk-test' }).post(() => ({ a: 1 }), signal)).resolves.toBe('{"ok":true}');
    expect(received).toHaveLength(1);
    expect(received[0].body).toEqual({ a: 1 });
    expect(received[0].headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer sk-test' });
  });

  it('waits as long as Retry-After says after a 429, then succeeds', async () => {
    answerNext({ status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'Rate limit reached' } } });
    await expect(client().post(() => ({}), signal)).resolves.toBe('{"ok":true}');
    expect(received).toHaveLength(2);
    expect(sleeps).toEqual([2000]);
  });

  it('retries 5xx with exponential backoff and jitter, then fails retryable after the last attempt', async () => {
    answerNext(...Array(3).fill({ status: 503, body: { error: { message: 'overloaded' } } }));
    const error = (await client()
      .post(() => ({}), signal)
      .catch((e: unknown) => e)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM_FAILED, retryable: true, details: { status: 503 } });
    expect(error.message).toBe('Test endpoint answered 503: overloaded (gave up after 3 attempts)');
    expect(received).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    [10, 20].forEach((ceiling, i) => {
      expect(sleeps[i]).toBeGreaterThanOrEqual(ceiling / 2);
      expect(sleeps[i]).toBeLessThanOrEqual(ceiling);
    });
  });

  it('gives up at once, retryable, when Retry-After is beyond what it will wait', async () => {
    answerNext({ status: 429, headers: { 'retry-after': '3600' } });
    await expect(client().post(() => ({}), signal)).rejects.toMatchObject({ retryable: true, details: { retryAfterMs: 3_600_000 } });
    expect(received).toHaveLength(1);
  });

  it('does not retry a 400, and passes on the upstream message without the key', async () => {
    answerNext({ status: 400, body: { error: { message: 'Bad input for key sk-secret-123' } } });
    const error = (await client({ apiKey: 'sk-secret-123' })
      .post(() => ({}), signal)
      .catch((e: unknown) => e)) as AppError;
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM_FAILED, retryable: false, details: { status: 400 } });
    expect(error.message).toBe('Test endpoint answered 400: Bad input for key [redacted]');
    expect(received).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('retries an attempt that gets no answer in time, and says so when none does', async () => {
    // The answered attempt must come back within the per-attempt limit: generous, so a loaded
    // machine (CI at load 8) never turns its answer into a second timeout.
    answerNext({ hang: true });
    await expect(client({ timeoutMs: ATTEMPT_LIMIT_MS }).post(() => ({}), signal)).resolves.toBe('{"ok":true}');
    expect(received).toHaveLength(2);

    answerNext({ hang: true }, { hang: true });
    await expect(client({ timeoutMs: ATTEMPT_LIMIT_MS, maxAttempts: 2 }).post(() => ({}), signal)).rejects.toMatchObject({
      retryable: true,
      message: `Test endpoint unreachable: no answer within ${ATTEMPT_LIMIT_MS} ms (gave up after 2 attempts)`,
    });
  });

  it('throws what `canceled` makes of the signal when the call is canceled', async () => {
    answerNext({ hang: true });
    const controller = new AbortController();
    const pending = client({ canceled: (s) => new AppError(ErrorCode.CANCELED, `stopped: ${String(s.reason)}`) }).post(
      () => ({}),
      controller.signal,
    );
    while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort('by the user');
    await expect(pending).rejects.toMatchObject({ code: ErrorCode.CANCELED, message: 'stopped: by the user' });
  });

  describe('adapt', () => {
    it('sends a freshly built body at once, without counting an attempt, when the caller adapts to a refusal', async () => {
      answerNext({ status: 400, body: { error: { message: 'unknown field: fancy' } } }, { status: 500 }, { status: 500 });
      let fancy = true;
      const refusals: unknown[] = [];
      const text = await client().post(() => (fancy ? { fancy: true } : {}), signal, {
        adapt: (refused) => {
          refusals.push(refused);
          fancy = false;
          return true;
        },
      });
      expect(text).toBe('{"ok":true}');
      expect(refusals).toEqual([{ status: 400, message: 'unknown field: fancy', body: { fancy: true } }]);
      expect(received.map((r) => r.body)).toEqual([{ fancy: true }, {}, {}, {}]);
      expect(sleeps).toHaveLength(2);
    });

    it('fails on a second refusal in the same attempt, and on a refusal the caller does not adapt to', async () => {
      answerNext({ status: 400, body: 'first' }, { status: 400, body: 'second' });
      const adapt = jest.fn(() => true);
      await expect(client().post(() => ({}), signal, { adapt })).rejects.toMatchObject({
        retryable: false,
        message: 'Test endpoint answered 400: second',
      });
      expect(adapt).toHaveBeenCalledTimes(1);

      answerNext({ status: 422, body: 'no' });
      await expect(client().post(() => ({}), signal, { adapt: () => false })).rejects.toMatchObject({ details: { status: 422 } });
      expect(received).toHaveLength(3);
    });
  });
});

describe('openAiCompatibleUrl', () => {
  it.each(['', '/', '/v1', '/v1/', '/v1/chat/completions'])('reaches the endpoint from the URL ending in %p', (suffix) => {
    expect(openAiCompatibleUrl(`https://llm.example${suffix}`, 'chat/completions')).toBe('https://llm.example/v1/chat/completions');
    expect(openAiCompatibleUrl(`https://llm.example${suffix.replace('chat/completions', 'embeddings')}`, 'embeddings')).toBe(
      'https://llm.example/v1/embeddings',
    );
  });
});
