import { ChatRequest, LanguageModels } from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import chat, { ChatCompletionParameters } from './index';

describe('chat-completion node', () => {
  it('asks the configured model with its system message, prompt and schema', async () => {
    const asked: ChatRequest[] = [];
    const models: LanguageModels = {
      chat: async (request) => {
        asked.push(request);
        return { content: '{"answer":"two hours"}', json: { answer: 'two hours' }, model: 'fake' };
      },
    };
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const params = Object.assign(new ChatCompletionParameters(), {
      system: 'Be brief.',
      prompt: 'How long?',
      responseSchema: schema,
      temperature: 0,
    });
    expect(await chat.execute(inputContext(params, { models }))).toEqual({
      content: '{"answer":"two hours"}',
      json: { answer: 'two hours' },
      model: 'fake',
    });
    expect(asked).toEqual([
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'How long?' },
        ],
        responseSchema: schema,
        temperature: 0,
        model: undefined,
        maxTokens: undefined,
      },
    ]);
  });
});
