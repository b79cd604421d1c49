import { ChatMessage, ChatResponse, defineNode } from '../../src/sdk';
import { ChatCompletionParameters } from './chat-completion.parameters';

export { ChatCompletionParameters };

export default defineNode({
  type: 'chat-completion',
  version: 1,
  displayName: 'Chat Completion',
  description:
    "Asks the service's language model (any OpenAI-compatible endpoint: LLM_URL) a question. Outputs {content, json?, model, usage?}; with a response schema the answer is JSON and `json` holds it parsed.",
  parameters: ChatCompletionParameters,
  defaultRunMode: 'input',
  execute(ctx): Promise<ChatResponse> {
    const { model, system, prompt, responseSchema, temperature, maxTokens } = ctx.params;
    const messages: ChatMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }];
    return ctx.models.chat({ model, messages, responseSchema, temperature, maxTokens }, ctx.signal);
  },
});
