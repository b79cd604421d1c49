import { ScriptedAgentLlm } from '../../../test/utils/scripted-agent-llm';
import { nodeHttpClient } from '../../engine/node-http-client';
import { SafeFetch } from '../../common/safe-fetch';
import { nodeLanguageModels } from './node-language-models';
import { OpenAiLanguageModels } from './openai-language-models.adapter';

describe('tool calling and streamed answers (ctx.models)', () => {
  let server: ScriptedAgentLlm;
  const signal = new AbortController().signal;
  const tools = [{ name: 'add', description: 'Adds', parameters: { type: 'object', properties: { a: { type: 'number' } } } }];

  beforeEach(async () => {
    server = await ScriptedAgentLlm.start({ apiKey: 'sk-test' });
  });
  afterEach(() => server.close());

  it.each([false, true])('offers tools and reads the tool calls the model asks for (streamed: %s)', async (stream) => {
    server.script = (_request, turn) =>
      turn === 0
        ? {
            toolCalls: [
              { name: 'add', arguments: { a: 1 } },
              { name: 'add', arguments: { a: 2 } },
            ],
          }
        : { content: 'three' };
    const models = new OpenAiLanguageModels({ url: server.url, apiKey: 'sk-test', model: 'house' });
    const tokens: string[] = [];
    const onToken = stream ? (text: string) => tokens.push(text) : undefined;
    const first = await models.chat({ messages: [{ role: 'user', content: 'add' }], tools, onToken }, signal);
    expect(first.toolCalls).toEqual([
      { id: 'call_0_0', name: 'add', arguments: '{"a":1}' },
      { id: 'call_0_1', name: 'add', arguments: '{"a":2}' },
    ]);
    expect(first.usage).toEqual({ promptTokens: 10, completionTokens: 5 });
    expect(server.requests[0].body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'add', parameters: tools[0].parameters } }],
      ...(stream ? { stream: true } : {}),
    });
    const second = await models.chat(
      {
        messages: [
          { role: 'user', content: 'add' },
          { role: 'assistant', content: '', toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: 'call_0_0', content: '1' },
          { role: 'tool', toolCallId: 'call_0_1', content: '2' },
        ],
        tools,
        onToken,
      },
      signal,
    );
    expect(second.content).toBe('three');
    expect(server.requests[1].body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: first.toolCalls!.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
      },
      { role: 'tool', tool_call_id: 'call_0_0', content: '1' },
      { role: 'tool', tool_call_id: 'call_0_1', content: '2' },
    ]);
    // Streamed in pieces of 4 characters; one piece when the answer came whole.
    expect(tokens).toEqual(stream ? ['thre', 'e'] : []);
  });

  it('streams through the guarded client for an endpoint of its own, the answer told in pieces', async () => {
    const open = await ScriptedAgentLlm.start();
    open.script = () => ({ content: 'a long answer in pieces' });
    const fetcher = new SafeFetch({ allowedHosts: ['127.0.0.1'], connectTimeoutMs: 5000, timeoutMs: 30_000, maxBytes: 1 << 20 });
    try {
      const models = nodeLanguageModels({ chat: () => Promise.reject(new Error('not this one')) }, nodeHttpClient(fetcher, signal));
      const tokens: string[] = [];
      const answer = await models.chat(
        { model: 'm', endpoint: { url: open.url }, messages: [{ role: 'user', content: 'q' }], onToken: (text) => tokens.push(text) },
        signal,
      );
      expect(answer.content).toBe('a long answer in pieces');
      expect(tokens.join('')).toBe('a long answer in pieces');
      expect(tokens.length).toBeGreaterThan(1);
    } finally {
      await fetcher.close();
      await open.close();
    }
  });
});
