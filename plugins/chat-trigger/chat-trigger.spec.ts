import { inputContext } from 'workflow-collection-service/sdk/testing';
import chatTrigger, { ChatTriggerParameters } from './index';

describe('chat-trigger node', () => {
  it('outputs the chat message and its session as they came', async () => {
    const input = { sessionId: 's-1', message: 'How tall is Etna?' };
    expect(await chatTrigger.execute(inputContext(new ChatTriggerParameters(), { input }))).toEqual(input);
  });

  it('is a trigger with no parameters', () => {
    expect(chatTrigger.trigger).toBe(true);
    expect(Object.keys(new ChatTriggerParameters())).toEqual([]);
  });
});
