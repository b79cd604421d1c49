import { FakeChatServer, promptInput, promptText } from '../../../test/utils/fake-chat-server';
import { AppError, ErrorCode } from '../../common/app-error';
import { answerSchema, ChatCompletionsDecider, ChatCompletionsDeciderOptions, parseAnswer } from './chat-completions-decider.adapter';
import { DecisionRequest } from '../../domain/parameter-decider.port';

const question: DecisionRequest = {
  node: { id: 'list', type: 'list-files', displayName: 'List Files', description: 'Lists one page of a collection' },
  instructions: 'Read the third page',
  input: { pages: 5, note: 'é' },
  parameters: [
    {
      name: 'offset',
      schema: { type: 'string', pattern: '^\\d{1,9}$', default: '0', description: 'How many files to skip' },
      hint: 'a multiple of 20',
      required: false,
    },
    { name: 'collectionId', schema: { type: 'string', minLength: 1 }, hint: '', required: true },
  ],
};

describe('ChatCompletionsDecider', () => {
  let server: FakeChatServer;
  let sleeps: number[];
  const signal = new AbortController().signal;

  const decider = (options: Partial<ChatCompletionsDeciderOptions> = {}) =>
    new ChatCompletionsDecider({
      url: server.url,
      model: 'fake-model',
      backoff: { initialMs: 10, maxMs: 40 },
      sleep: async (ms) => void sleeps.push(ms),
      ...options,
    });

  beforeEach(async () => {
    server = await FakeChatServer.start({ apiKey: 'sk-test-key' });
    server.reply = () => '{"offset": "40", "collectionId": "col_1"}';
    sleeps = [];
  });
  afterEach(() => server.close());

  it('asks for a JSON object of the parameters, with the node, instructions, schemas, hints and input', async () => {
    await expect(decider({ apiKey: 'sk-test-key' }).decide(question, signal)).resolves.toEqual({ offset: '40', collectionId: 'col_1' });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions', headers: { authorization: 'Bearer sk-test-key' } });
    expect(request.body).toMatchObject({ model: 'fake-model', temperature: 0 });
    expect(request.body?.messages?.map((m) => m.role)).toEqual(['system', 'user']);
    const prompt = promptText(request);
    for (const part of [
      'List Files (node type list-files, id "list")',
      'Lists one page of a collection',
      'Instructions: Read the third page',
      '- offset (optional), JSON Schema {"type":"string"',
      'Hint: a multiple of 20',
      '- collectionId (required)',
    ]) {
      expect(prompt).toContain(part);
    }
    expect(promptInput(request)).toEqual({ pages: 5, note: 'é' });
    expect(request.body?.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'parameters',
        strict: true,
        schema: {
          type: 'object',
          properties: { offset: { type: ['string', 'null'], description: 'How many files to skip' }, collectionId: { type: 'string' } },
          required: ['offset', 'collectionId'],
          additionalProperties: false,
        },
      },
    });
  });

  it('sends the refused answer back with its problems when correcting', async () => {
    await decider({ apiKey: 'sk-test-key' }).decide(
      { ...question, correction: { answer: { offset: 'forty' }, problems: [{ field: 'offset', reason: 'must be a whole number' }] } },
      signal,
    );
    const messages = server.requests[0].body?.messages ?? [];
    expect(messages.slice(2)).toEqual([
      { role: 'assistant', content: '{"offset":"forty"}' },
      { role: 'user', content: expect.stringContaining('refused: offset must be a whole number') },
    ]);
  });

  it('cuts a long input', async () => {
    await decider({ apiKey: 'sk-test-key', maxInputChars: 50 }).decide({ ...question, input: 'x'.repeat(500) }, signal);
    expect(promptText(server.requests[0])).toContain('… (cut: 502 characters in all)');
  });

  describe('retries', () => {
    it('waits as long as Retry-After says after a 429, then succeeds', async () => {
      server.answerNext({ status: 429, headers: { 'retry-after': '0.02' }, body: { error: { message: 'Rate limit reached' } } });
      await expect(decider({ apiKey: 'sk-test-key' }).decide(question, signal)).resolves.toMatchObject({ offset: '40' });
      expect(server.requests).toHaveLength(2);
      expect(sleeps).toEqual([20]);
    });

    it('retries 5xx and dropped connections with backoff, then fails retryable', async () => {
      server.answerNext(
        { status: 500, body: { error: { message: 'overloaded' } } },
        { dropConnection: true },
        { status: 503, body: 'busy' },
        { status: 502 },
      );
      const error = (await decider({ apiKey: 'sk-test-key' })
        .decide(question, signal)
        .catch((e: unknown) => e)) as AppError;
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ code: ErrorCode.UPSTREAM_FAILED, retryable: true, details: { status: 502 } });
      expect(error.message).toMatch(/answered 502.*gave up after 4 attempts/);
      expect(server.requests).toHaveLength(4);
      expect(sleeps).toHaveLength(3);
      [10, 20, 40].forEach((ceiling, i) => expect(sleeps[i]).toBeGreaterThanOrEqual(ceiling / 2));
    });

    it('retries an attempt that gets no answer in time', async () => {
      server.answerNext({ hang: true });
      // Generous: the answered attempt must not itself run out of time on a loaded machine.
      await expect(decider({ apiKey: 'sk-test-key', timeoutMs: 1500 }).decide(question, signal)).resolves.toMatchObject({ offset: '40' });
      expect(server.requests).toHaveLength(2);
    });

    it('gives up at once, retryable, when Retry-After is beyond what it will wait', async () => {
      server.answerNext({ status: 429, headers: { 'retry-after': '3600' } });
      await expect(decider({ apiKey: 'sk-test-key' }).decide(question, signal)).rejects.toMatchObject({
        retryable: true,
        details: { retryAfterMs: 3_600_000 },
      });
      expect(server.requests).toHaveLength(1);
    });

    it('does not retry a 401, and never repeats the API key', async () => {
      const error = (await decider({ apiKey: 'sk-wrong-key' })
        .decide(question, signal)
        .catch((e: unknown) => e)) as AppError;
      expect(error).toMatchObject({ code: ErrorCode.UPSTREAM_FAILED, retryable: false, details: { status: 401 } });
      expect(error.message).toContain('Incorrect API key provided');
      expect(error.message).not.toContain('sk-wrong-key');
      expect(server.requests).toHaveLength(1);
    });

    it('stops waiting when the run is canceled', async () => {
      server.answerNext({ hang: true });
      const controller = new AbortController();
      const pending = decider({ apiKey: 'sk-test-key' }).decide(question, controller.signal);
      setTimeout(() => controller.abort(new Error('canceled by the user')), 20);
      await expect(pending).rejects.toThrow('canceled by the user');
    });
  });

  it('asks again without response_format, from then on, when the server does not know it', async () => {
    await server.close();
    server = await FakeChatServer.start({ refuseResponseFormat: true });
    server.reply = () => 'Sure! ```json\n{"offset": "20", "collectionId": "col_2"}\n```';
    const client = decider();
    await expect(client.decide(question, signal)).resolves.toEqual({ offset: '20', collectionId: 'col_2' });
    await expect(client.decide(question, signal)).resolves.toEqual({ offset: '20', collectionId: 'col_2' });
    expect(server.requests.map((r) => Boolean(r.body?.response_format))).toEqual([true, false, false]);
    expect(sleeps).toEqual([]);
  });

  it('reports a refusal and an answer without a message', async () => {
    server.answerNext(
      { status: 200, body: { choices: [{ message: { role: 'assistant', content: null, refusal: 'I cannot help with that' } }] } },
      { status: 200, body: { choices: [] } },
    );
    await expect(decider({ apiKey: 'sk-test-key' }).decide(question, signal)).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining('refused: I cannot help with that'),
    });
    await expect(decider({ apiKey: 'sk-test-key' }).decide(question, signal)).rejects.toMatchObject({
      message: expect.stringContaining('no choices[0].message'),
    });
  });

  it('reads JSON out of fences and prose, and hands back text that holds none', () => {
    expect(parseAnswer('```json\n{"a": 1}\n```')).toEqual({ a: 1 });
    expect(parseAnswer('Here you go: {"a": [1, 2]} — enjoy')).toEqual({ a: [1, 2] });
    expect(parseAnswer('forty')).toBe('forty');
  });

  it('turns strict mode off for a parameter of no declared type, and types an enum of strings', () => {
    const typed = answerSchema([{ name: 'method', schema: { enum: ['GET', 'POST'] }, hint: '', required: true }]);
    expect(typed).toEqual({
      strict: true,
      schema: expect.objectContaining({ properties: { method: { type: 'string', enum: ['GET', 'POST'] } } }),
    });
    const untyped = answerSchema([{ name: 'files', schema: { type: 'array' }, hint: '', required: false }]);
    expect(untyped.strict).toBe(false);
    expect(untyped.schema.properties).toEqual({ files: { type: ['array', 'null'], items: {} } });
  });
});
