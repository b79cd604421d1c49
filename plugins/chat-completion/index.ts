import { ChatMessage, ChatResponse, defineNode, NodeConfigurationError } from 'workflow-collection-service/sdk';
import { ChatCompletionParameters } from './chat-completion.parameters';

export { ChatCompletionParameters };

export default defineNode({
  type: 'chat-completion',
  version: 1,
  displayName: 'Chat Completion',
  description:
    "Asks a language model a question: the service's (any OpenAI-compatible endpoint: LLM_URL), or another one given by `endpoint` and `credential`. Outputs {content, json?, model, usage?}; with a response schema the answer is JSON and `json` holds it parsed.",
  parameters: ChatCompletionParameters,
  defaultRunMode: 'input',
  execute(ctx): Promise<ChatResponse> {
    const { model, system, prompt, responseSchema, temperature, maxTokens, endpoint, credential } = ctx.params;
    if (credential && !endpoint)
      throw new NodeConfigurationError('credential authenticates to an endpoint of your own: set endpoint too', {
        details: { parameter: 'endpoint' },
      });
    const messages: ChatMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }];
    return ctx.models.chat(
      { model, messages, responseSchema, temperature, maxTokens, ...(endpoint ? { endpoint: { url: endpoint, credential } } : {}) },
      ctx.signal,
    );
  },
});
