import { AppError, ErrorCode } from '../../common/app-error';
import { openAiCompatibleUrl, RetryingJsonClient, RetryingJsonClientOptions } from '../../common/retrying-json-client';

export interface ChatCompletionsOptions {
  /** The chat completions URL itself, or the server's base URL with or without `/v1`. */
  url: string;
  model: string;
  apiKey?: string;
  /** Per HTTP attempt, including reading the answer. */
  timeoutMs?: number;
  maxAttempts?: number;
  /** Delay before the second attempt; doubled for each later one up to `maxMs`, then jittered. */
  backoff?: { initialMs: number; maxMs: number };
  /** A `Retry-After` longer than this fails the call at once (retryable) rather than holding the run. */
  maxRetryAfterMs?: number;
  /** How to wait between attempts; tests pass one that records the delays. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** How requests go out; plain fetch unless given (see RetryingJsonClientOptions.fetch). */
  fetch?: RetryingJsonClientOptions['fetch'];
}

export interface ChatCompletion {
  model?: string;
  messages: ReadonlyArray<{ role: string; content: string }>;
  /** Constrains the answer to this JSON Schema where the server supports `response_format: json_schema`. */
  responseSchema?: { name: string; schema: Record<string, unknown>; strict: boolean };
  temperature?: number;
  maxTokens?: number;
}

export interface ChatAnswer {
  content: string;
  model: string;
  usage?: { promptTokens: number; completionTokens: number };
}

/**
 * One OpenAI-compatible `POST /v1/chat/completions` client (OpenAI, Azure-style proxies, vLLM,
 * llama.cpp, Ollama, LiteLLM...), shared by AI Decide and the Chat Completion node. A JSON answer
 * is asked for with a `json_schema` response format where the server supports it; a server that
 * refuses that format is asked again with the prompt alone, once, and from then on. 429 and 5xx
 * answers and network failures are retried with backoff.
 */
export class ChatCompletionsClient {
  readonly model: string;
  private readonly client: RetryingJsonClient;
  private readonly closing = new AbortController();
  /** Cleared when the server refuses `response_format: json_schema`. */
  private structuredOutput = true;

  constructor(options: ChatCompletionsOptions) {
    this.model = options.model;
    this.client = new RetryingJsonClient({
      endpoint: openAiCompatibleUrl(options.url, 'chat/completions'),
      apiKey: options.apiKey || undefined,
      errorCode: ErrorCode.UPSTREAM_FAILED,
      serverName: 'Language model endpoint',
      timeoutMs: options.timeoutMs ?? 60_000,
      maxAttempts: options.maxAttempts ?? 4,
      backoff: options.backoff ?? { initialMs: 500, maxMs: 8_000 },
      maxRetryAfterMs: options.maxRetryAfterMs ?? 30_000,
      sleep: options.sleep,
      fetch: options.fetch,
    });
  }

  /** @throws AppError UPSTREAM_FAILED (retryable when trying later may help), or the signal's reason */
  async complete(request: ChatCompletion, signal: AbortSignal): Promise<ChatAnswer> {
    const combined = AbortSignal.any([signal, this.closing.signal]);
    const { responseSchema } = request;
    const body = () => ({
      model: request.model ?? this.model,
      messages: request.messages,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      ...(responseSchema && this.structuredOutput
        ? { response_format: { type: 'json_schema', json_schema: { name: responseSchema.name, strict: responseSchema.strict, schema: responseSchema.schema } } }
        : {}),
    });
    const text = await this.client.post(body, combined, {
      adapt: ({ status, message, body: sent }) => {
        if (status !== 400 || !('response_format' in sent) || !/response_format|json_schema|structured/i.test(message)) return false;
        // The server works but does not know the format: the prompt alone asks for JSON, now and from now on.
        this.structuredOutput = false;
        return true;
      },
    });
    return this.answerOf(text, request.model ?? this.model);
  }

  /** Fails calls in flight and every later call. */
  close(): void {
    this.closing.abort(new AppError(ErrorCode.UNAVAILABLE, 'The language model client is closed'));
  }

  private answerOf(text: string, asked: string): ChatAnswer {
    const malformed = (why: string) => new AppError(ErrorCode.UPSTREAM_FAILED, `Language model endpoint answered an unexpected body: ${why}`);
    let body: { model?: unknown; choices?: Array<{ message?: { content?: unknown; refusal?: unknown } }>; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed('not JSON');
    }
    const message = Array.isArray(body?.choices) ? body.choices[0]?.message : undefined;
    if (!message) throw malformed('no choices[0].message');
    if (typeof message.refusal === 'string' && message.refusal) {
      throw new AppError(ErrorCode.UPSTREAM_FAILED, `The language model refused: ${this.client.clip(message.refusal)}`);
    }
    if (typeof message.content !== 'string') throw malformed('choices[0].message.content is not text');
    const usage = body.usage;
    return {
      content: message.content,
      model: typeof body.model === 'string' ? body.model : asked,
      ...(usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number'
        ? { usage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens } }
        : {}),
    };
  }
}

/** Models wrap JSON in code fences or a sentence now and then; the value inside is the answer. */
export function parseAnswer(content: string): unknown {
  const unfenced = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1');
  for (const candidate of [unfenced, unfenced.slice(unfenced.indexOf('{'), unfenced.lastIndexOf('}') + 1)]) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next reading
    }
  }
  return content;
}
