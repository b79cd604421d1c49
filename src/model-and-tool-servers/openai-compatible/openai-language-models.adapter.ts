import { AppError, isAppError } from '../../common/app-error';
import { ChatMessage, ChatRequest, ChatResponse, LanguageModels, NodeConfigurationError, NodeUpstreamError } from '../../sdk';
import { ChatCompletionsClient, ChatCompletionsOptions, parseAnswer, WireMessage } from './chat-completions.client';

/**
 * `ctx.models` over the configured OpenAI-compatible endpoint (LLM_URL, LLM_API_KEY, LLM_MODEL).
 * The service's errors become the node error types: a refused request is a configuration error,
 * a server that failed (after the client's own retries) an upstream one, retryable when it says so.
 */
export class OpenAiLanguageModels implements LanguageModels {
  private readonly client: ChatCompletionsClient;

  constructor(options: ChatCompletionsOptions) {
    this.client = new ChatCompletionsClient(options);
  }

  async chat(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    if (!request.messages.length) throw new NodeConfigurationError('A chat request needs at least one message');
    try {
      const answer = await this.client.complete(
        {
          model: request.model,
          messages: request.messages.map(wireMessage),
          temperature: request.temperature,
          maxTokens: request.maxTokens,
          ...(request.tools?.length ? { tools: request.tools } : {}),
          ...(request.onToken ? { onToken: request.onToken } : {}),
          ...(request.responseSchema ? { responseSchema: { name: 'answer', schema: request.responseSchema, strict: false } } : {}),
        },
        signal,
      );
      if (!request.responseSchema) return answer;
      const json = parseAnswer(answer.content);
      if (json === answer.content) {
        throw new NodeUpstreamError('The language model was asked for JSON but answered text that is not JSON', {
          retryable: true,
          details: { content: answer.content.slice(0, 500) },
        });
      }
      return { ...answer, json };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw nodeError(error);
    }
  }

  close(): void {
    this.client.close();
  }
}

/** Tool calls and tool results as OpenAI-compatible servers spell them. */
function wireMessage(message: ChatMessage): WireMessage {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
  if (message.role === 'assistant' && message.toolCalls?.length) {
    return {
      role: 'assistant',
      content: message.content || null,
      tool_calls: message.toolCalls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    };
  }
  return { role: message.role, content: message.content };
}

function nodeError(error: unknown): Error {
  if (!isAppError(error)) return error instanceof Error ? error : new Error(String(error));
  const status = (error.details as { status?: number } | undefined)?.status;
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return new NodeConfigurationError(error.message, { cause: error, details: { status } });
  }
  return new NodeUpstreamError(error.message, {
    cause: error,
    ...(status !== undefined ? { status } : {}),
    retryable: (error as AppError).retryable || status === undefined,
  });
}
