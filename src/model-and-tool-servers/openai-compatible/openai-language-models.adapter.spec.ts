import { FakeChatServer } from '../../../test/utils/fake-chat-server';
import { isNodeError } from '../../sdk';
import { OpenAiLanguageModels } from './openai-language-models.adapter';

describe('OpenAiLanguageModels (ctx.models)', () => {
  let server: FakeChatServer;
  const signal = new AbortController().signal;
  const models = (apiKey = 'sk-test') =>
    new OpenAiLanguageModels({
      url: server.url,
      apiKey,
      model: 'house-model',
      backoff: { initialMs: 1, maxMs: 2 },
      sleep: async () => undefined,
    });

  beforeEach(async () => {
    server = await FakeChatServer.start({ apiKey: 'sk-test' });
  });
  afterEach(() => server.close());

  it('sends the messages to the configured model and answers with the text, model and usage', async () => {
    server.reply = () => 'Two hours.';
    const answer = await models().chat(
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'How long?' },
        ],
        temperature: 0.2,
        maxTokens: 50,
      },
      signal,
    );
    expect(answer).toEqual({ content: 'Two hours.', model: 'house-model', usage: { promptTokens: 1, completionTokens: 1 } });
    expect(server.requests[0].body).toMatchObject({
      model: 'house-model',
      temperature: 0.2,
      max_tokens: 50,
      messages: [{ role: 'system' }, { role: 'user' }],
    });
    expect(server.requests[0].body).not.toHaveProperty('response_format');
  });

  it('asks for JSON matching a schema and parses it, taking another model when told', async () => {
    server.reply = () => '```json\n{"answer": "two hours"}\n```';
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const answer = await models().chat(
      { model: 'other-model', messages: [{ role: 'user', content: 'q' }], responseSchema: schema },
      signal,
    );
    expect(answer.json).toEqual({ answer: 'two hours' });
    expect(server.requests[0].body).toMatchObject({
      model: 'other-model',
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
    });
  });

  it('retries 429 and 5xx, then gives up with a retryable upstream error', async () => {
    server.answerNext({ status: 429, body: { error: { message: 'slow down' } } }, { status: 503, body: { error: { message: 'busy' } } });
    server.reply = () => 'ok';
    expect((await models().chat({ messages: [{ role: 'user', content: 'q' }] }, signal)).content).toBe('ok');
    server.answerNext(...Array.from({ length: 4 }, () => ({ status: 502, body: { error: { message: 'down' } } })));
    const error = await models()
      .chat({ messages: [{ role: 'user', content: 'q' }] }, signal)
      .catch((e: unknown) => e);
    expect(isNodeError(error) && [error.kind, error.retryable]).toEqual(['upstream', true]);
  });

  it('makes a refused key or request a configuration error, never retried', async () => {
    const refused = await models('sk-wrong')
      .chat({ messages: [{ role: 'user', content: 'q' }] }, signal)
      .catch((e: unknown) => e);
    expect(isNodeError(refused) && [refused.kind, refused.retryable]).toEqual(['configuration', false]);
    expect(server.requests).toHaveLength(1);
    const empty = await models()
      .chat({ messages: [] }, signal)
      .catch((e: unknown) => e);
    expect(isNodeError(empty) && empty.kind).toBe('configuration');
  });

  it('fails a JSON request answered with prose as a retryable upstream error', async () => {
    server.reply = () => 'I would rather not.';
    const error = await models()
      .chat({ messages: [{ role: 'user', content: 'q' }], responseSchema: { type: 'object' } }, signal)
      .catch((e: unknown) => e);
    expect(isNodeError(error) && [error.kind, error.retryable]).toEqual(['upstream', true]);
  });
});
