import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  CollectionsFacade,
  ConversationMemory,
  LanguageModels,
  NodeSubStep,
} from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import agent, { AiAgentParameters } from './index';

type Script = (request: ChatRequest, turn: number) => ChatResponse;

function models(script: Script) {
  const asked: ChatRequest[] = [];
  const facade: LanguageModels = {
    chat: async (request) => {
      asked.push({ ...request, messages: [...request.messages] });
      return script(request, asked.length);
    },
  };
  return { facade, asked };
}

const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: JSON.stringify(args) });
const collections = {
  search: async (collectionId: string, query: { text: string }) => ({
    items: [{ id: 'psg_1', content: `About ${query.text}`, distance: 0.2, fileId: 'fle_1', fileName: 'bees.txt', page: null }],
  }),
} as unknown as CollectionsFacade;

function memory(): ConversationMemory & { kept: Map<string, ChatMessage[]> } {
  const kept = new Map<string, ChatMessage[]>();
  return {
    kept,
    load: async (key) => [...(kept.get(key) ?? [])],
    append: async (key, messages, { window }) => void kept.set(key, [...(kept.get(key) ?? []), ...messages].slice(-window)),
  };
}

const params = (values: Record<string, unknown>) => plainToInstance(AiAgentParameters, { message: 'What do bees do?', ...values });

describe('ai-agent node', () => {
  it('searches, then answers; each model and tool call is a sub-step', async () => {
    const model = models((request, turn) =>
      turn === 1
        ? {
            content: '',
            model: 'fake',
            toolCalls: [call('search_collections', { query: 'bees' })],
            usage: { promptTokens: 10, completionTokens: 2 },
          }
        : { content: 'They dance [bees.txt]', model: 'fake', usage: { promptTokens: 20, completionTokens: 5 } },
    );
    const steps: NodeSubStep[] = [];
    const output = await agent.execute(
      inputContext(params({ collections: ['col_1'] }), {
        models: model.facade,
        collections,
        progress: { subStep: (s) => steps.push(s), token() {} },
      }),
    );
    expect(output).toEqual({
      answer: 'They dance [bees.txt]',
      model: 'fake',
      iterations: 2,
      toolCalls: 1,
      usage: { promptTokens: 30, completionTokens: 7 },
    });
    expect(steps.map((s) => [s.kind, s.name])).toEqual([
      ['model', 'fake'],
      ['tool', 'search_collections'],
      ['model', 'fake'],
    ]);
    expect(steps[1].result).toEqual([
      { collectionId: 'col_1', fileId: 'fle_1', fileName: 'bees.txt', passage: 'About bees', distance: 0.2 },
    ]);
    const second = model.asked[1].messages;
    expect(second[second.length - 1]).toEqual({
      role: 'tool',
      toolCallId: 'call_search_collections',
      content: expect.stringContaining('"fileName":"bees.txt"'),
    });
  });

  it('hands a tool failure back to the model as the tool result', async () => {
    const model = models((request, turn) =>
      turn === 1
        ? { content: '', model: 'fake', toolCalls: [call('search_collections', { wrong: 1 }), call('nope', {})] }
        : { content: 'sorry', model: 'fake' },
    );
    const steps: NodeSubStep[] = [];
    await agent.execute(
      inputContext(params({ collections: ['col_1'] }), {
        models: model.facade,
        collections,
        progress: { subStep: (s) => steps.push(s), token() {} },
      }),
    );
    const results = model.asked[1].messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content).error);
    expect(results).toEqual([expect.stringContaining('query is required'), expect.stringContaining('There is no tool named nope')]);
    expect(steps.filter((s) => s.kind === 'tool').every((s) => typeof s.error === 'string')).toBe(true);
  });

  it('fails after maxIterations model calls that still ask for tools', async () => {
    const model = models(() => ({ content: '', model: 'fake', toolCalls: [call('search_collections', { query: 'more' })] }));
    await expect(
      agent.execute(inputContext(params({ collections: ['col_1'], maxIterations: 3 }), { models: model.facade, collections })),
    ).rejects.toThrow('The agent made its 3 model calls (maxIterations) without a final answer');
    expect(model.asked).toHaveLength(3);
  });

  it('checks the answer against outputSchema, asking again once', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const model = models((request, turn) =>
      turn === 1 ? { content: '{"reply": "x"}', model: 'fake' } : { content: '```json\n{"answer": "dance"}\n```', model: 'fake' },
    );
    const output = await agent.execute(inputContext(params({ outputSchema: schema }), { models: model.facade }));
    expect(output).toMatchObject({ json: { answer: 'dance' }, iterations: 2 });
    expect(model.asked[1].messages.at(-1)?.content).toContain('answer is required');
    const wrong = models(() => ({ content: 'not json', model: 'fake' }));
    await expect(agent.execute(inputContext(params({ outputSchema: schema }), { models: wrong.facade }))).rejects.toThrow(
      "The agent's answer does not match outputSchema: the answer is not JSON",
    );
  });

  it('remembers the conversation per session key, within the window', async () => {
    const kept = memory();
    const model = models((request) => ({ content: `answer ${request.messages.length}`, model: 'fake' }));
    await agent.execute(
      inputContext(params({ sessionKey: 's1', message: 'first', memoryWindow: 4 }), { models: model.facade, memory: kept }),
    );
    await agent.execute(
      inputContext(params({ sessionKey: 's1', message: 'second', memoryWindow: 4 }), { models: model.facade, memory: kept }),
    );
    expect(model.asked[1].messages.map((m) => m.content)).toEqual(['first', 'answer 1', 'second']);
    expect(kept.kept.get('s1')?.map((m) => m.content)).toEqual(['first', 'answer 1', 'second', 'answer 3']);
  });

  it('fails over its token budget', async () => {
    const model = models(() => ({
      content: '',
      model: 'fake',
      toolCalls: [call('search_collections', { query: 'q' })],
      usage: { promptTokens: 600, completionTokens: 10 },
    }));
    await expect(
      agent.execute(inputContext(params({ collections: ['col_1'], tokenBudget: 1000 }), { models: model.facade, collections })),
    ).rejects.toThrow('over its token budget of 1000');
  });

  it.each([
    [{ message: 'q' }, []],
    [{ message: '' }, ['message']],
    [{ message: 'q', maxIterations: 0 }, ['maxIterations']],
    [{ message: 'q', mcpServers: [{ url: 'ftp://x' }] }, ['mcpServers']],
    [{ message: 'q', mcpServers: [{ url: 'https://x.example/mcp', credential: 'crd_a1', tools: ['t'] }] }, []],
    [{ message: 'q', credential: 'x' }, ['credential']],
  ])('validates %j', (values, bad) => {
    expect(validateSync(plainToInstance(AiAgentParameters, values)).map((e) => e.property)).toEqual(bad);
  });
});
