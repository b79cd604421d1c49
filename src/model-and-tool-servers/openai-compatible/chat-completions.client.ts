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

/** A message as OpenAI-compatible servers take it (tool calls and tool results included). */
export type WireMessage = { role: string; content: string | null; [field: string]: unknown };

interface ToolCallAnswer {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatCompletion {
  model?: string;
  messages: ReadonlyArray<WireMessage>;
  /** Functions the model may ask to call. */
  tools?: ReadonlyArray<{ name: string; description?: string; parameters: Record<string, unknown> }>;
  /** Streams the answer (`stream: true`): called with each piece of its text as it arrives. */
  onToken?: (text: string) => void;
  /** Constrains the answer to this JSON Schema where the server supports `response_format: json_schema`. */
  responseSchema?: { name: string; schema: Record<string, unknown>; strict: boolean };
  temperature?: number;
  maxTokens?: number;
}

export interface ChatAnswer {
  content: string;
  model: string;
  usage?: { promptTokens: number; completionTokens: number };
  toolCalls?: ToolCallAnswer[];
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
  /** Cleared when the server refuses `stream_options` (usage at the end of a stream). */
  private streamUsage = true;

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
        ? {
            response_format: {
              type: 'json_schema',
              json_schema: { name: responseSchema.name, strict: responseSchema.strict, schema: responseSchema.schema },
            },
          }
        : {}),
      ...(request.tools?.length
        ? {
            tools: request.tools.map((tool) => ({
              type: 'function',
              function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: tool.parameters },
            })),
          }
        : {}),
      ...(request.onToken ? { stream: true, ...(this.streamUsage ? { stream_options: { include_usage: true } } : {}) } : {}),
    });
    // Pieces of text as they arrive; the answer itself is read from the whole body below.
    const live = request.onToken ? new StreamedAnswer(request.onToken) : undefined;
    const text = await this.client.post(body, combined, {
      adapt: ({ status, message, body: sent }) => {
        if (status === 400 && 'stream_options' in sent && /stream_options/i.test(message)) {
          // Streams without the usage at the end, now and from now on.
          this.streamUsage = false;
          return true;
        }
        if (status !== 400 || !('response_format' in sent) || !/response_format|json_schema|structured/i.test(message)) return false;
        // The server works but does not know the format: the prompt alone asks for JSON, now and from now on.
        this.structuredOutput = false;
        return true;
      },
      ...(live ? { onChunk: (chunk: Buffer) => live.push(chunk) } : {}),
    });
    if (isEventStream(text)) return this.streamedAnswerOf(text, request.model ?? this.model);
    const answer = this.answerOf(text, request.model ?? this.model);
    // A server that ignored `stream` answered at once: its text is the one piece.
    if (request.onToken && answer.content) request.onToken(answer.content);
    return answer;
  }

  /** Fails calls in flight and every later call. */
  close(): void {
    this.closing.abort(new AppError(ErrorCode.UNAVAILABLE, 'The language model client is closed'));
  }

  private streamedAnswerOf(text: string, asked: string): ChatAnswer {
    const whole = new StreamedAnswer();
    whole.push(Buffer.from(text));
    const answer = whole.end();
    if (answer.refusal) throw new AppError(ErrorCode.UPSTREAM_FAILED, `The language model refused: ${this.client.clip(answer.refusal)}`);
    return {
      content: answer.content,
      model: answer.model ?? asked,
      ...(answer.usage ? { usage: answer.usage } : {}),
      ...(answer.toolCalls.length ? { toolCalls: answer.toolCalls } : {}),
    };
  }

  private answerOf(text: string, asked: string): ChatAnswer {
    const malformed = (why: string) =>
      new AppError(ErrorCode.UPSTREAM_FAILED, `Language model endpoint answered an unexpected body: ${why}`);
    let body: {
      model?: unknown;
      choices?: Array<{ message?: { content?: unknown; refusal?: unknown; tool_calls?: unknown } }>;
      usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
    };
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
    const toolCalls = toolCallsOf(message.tool_calls);
    if (typeof message.content !== 'string' && !(toolCalls.length && message.content == null))
      throw malformed('choices[0].message.content is not text');
    const usage = body.usage;
    return {
      content: typeof message.content === 'string' ? message.content : '',
      ...(toolCalls.length ? { toolCalls } : {}),
      model: typeof body.model === 'string' ? body.model : asked,
      ...(usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number'
        ? { usage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens } }
        : {}),
    };
  }
}

/** The tool calls of a (non-streamed) answer, skipping malformed entries. */
function toolCallsOf(value: unknown): ToolCallAnswer[] {
  if (!Array.isArray(value)) return [];
  const calls: ToolCallAnswer[] = [];
  for (const [index, call] of value.entries()) {
    const fn = (call as { function?: { name?: unknown; arguments?: unknown } })?.function;
    if (typeof fn?.name !== 'string') continue;
    const id = (call as { id?: unknown }).id;
    calls.push({
      id: typeof id === 'string' && id ? id : `call_${index}`,
      name: fn.name,
      arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
    });
  }
  return calls;
}

/** A body of server-sent events rather than one JSON document (a streamed answer). */
function isEventStream(text: string): boolean {
  const start = text.trimStart();
  return start.startsWith('data:') || start.startsWith('event:') || start.startsWith(':');
}

interface StreamedDelta {
  content?: string | null;
  refusal?: string | null;
  tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
}

/**
 * An answer streamed as server-sent events (`chat.completion.chunk`s), put together piece by piece:
 * the text, the tool calls (whose names and arguments arrive in pieces, by index), the model and
 * the usage (sent last when `stream_options.include_usage` was asked).
 */
class StreamedAnswer {
  private readonly decoder = new TextDecoder();
  private rest = '';
  private content = '';
  private refusal = '';
  private model?: string;
  private usage?: { promptTokens: number; completionTokens: number };
  private readonly calls = new Map<number, ToolCallAnswer>();

  constructor(private readonly onToken?: (text: string) => void) {}

  push(chunk: Buffer): void {
    this.rest += this.decoder.decode(chunk, { stream: true });
    const lines = this.rest.split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  end(): {
    content: string;
    refusal: string;
    model?: string;
    usage?: { promptTokens: number; completionTokens: number };
    toolCalls: ToolCallAnswer[];
  } {
    this.rest += this.decoder.decode();
    if (this.rest) this.line(this.rest);
    this.rest = '';
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
    return { content: this.content, refusal: this.refusal, model: this.model, usage: this.usage, toolCalls };
  }

  private line(raw: string): void {
    const line = raw.trim();
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (!data || data === '[DONE]') return;
    let event: {
      model?: unknown;
      choices?: Array<{ delta?: StreamedDelta }>;
      usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
    };
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof event.model === 'string') this.model = event.model;
    const usage = event.usage;
    if (usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') {
      this.usage = { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
    }
    const delta = Array.isArray(event.choices) ? event.choices[0]?.delta : undefined;
    if (!delta) return;
    if (typeof delta.content === 'string' && delta.content) {
      this.content += delta.content;
      this.onToken?.(delta.content);
    }
    if (typeof delta.refusal === 'string') this.refusal += delta.refusal;
    for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const index = typeof piece.index === 'number' ? piece.index : this.calls.size;
      const call = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (typeof piece.id === 'string' && piece.id) call.id = piece.id;
      if (typeof piece.function?.name === 'string') call.name += piece.function.name;
      if (typeof piece.function?.arguments === 'string') call.arguments += piece.function.arguments;
      this.calls.set(index, call);
    }
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
