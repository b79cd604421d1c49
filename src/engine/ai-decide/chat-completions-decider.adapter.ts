import { setTimeout as delay } from 'node:timers/promises';
import { AppError, ErrorCode } from '../../common/app-error';
import { parseRetryAfter } from '../../embeddings/openai-compatible/openai-embedder.adapter';
import type { JsonSchema } from '../parameter-schema';
import { DecidedParameter, DecisionRequest, ParameterDecider } from './parameter-decider.port';

export interface ChatCompletionsDeciderOptions {
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
  /** Longest JSON text of the node's input put in the prompt; the rest is cut. */
  maxInputChars?: number;
  /** How to wait between attempts; tests pass one that records the delays. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

type Attempt = { content: string } | { retry: AppError; retryAfterMs?: number } | { unsupportedFormat: AppError };

const UPSTREAM_MESSAGE_CHARS = 500;

const SYSTEM_PROMPT =
  'You fill in parameters of one step of an automated workflow. Reply with one JSON object and nothing else: ' +
  'its keys are exactly the parameter names asked for, and each value is valid against that parameter\'s JSON Schema. ' +
  'Use null for an optional parameter you choose to leave out.';

/**
 * AI Decide over any server speaking OpenAI's `POST /v1/chat/completions` (OpenAI, Azure-style
 * proxies, vLLM, llama.cpp, Ollama, LiteLLM...). The answer is constrained with a `json_schema`
 * response format where the server supports it; a server that refuses that format is asked again
 * with the prompt alone, once, and from then on. 429 and 5xx answers and network failures are
 * retried with backoff. The URL is operator configuration, not user input, so plain `fetch` is
 * used rather than the SSRF-guarded client.
 */
export class ChatCompletionsDecider extends ParameterDecider {
  readonly model: string;
  private readonly endpoint: string;
  private readonly headers: Record<string, string>;
  private readonly apiKey?: string;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly maxRetryAfterMs: number;
  private readonly maxInputChars: number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly closing = new AbortController();
  /** Cleared when the server refuses `response_format: json_schema`. */
  private structuredOutput = true;

  constructor(options: ChatCompletionsDeciderOptions) {
    super();
    this.model = options.model;
    this.endpoint = chatCompletionsUrl(options.url);
    this.apiKey = options.apiKey || undefined;
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
    };
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.maxAttempts = options.maxAttempts ?? 4;
    this.backoff = options.backoff ?? { initialMs: 500, maxMs: 8_000 };
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
    this.maxInputChars = options.maxInputChars ?? 20_000;
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
  }

  /** @returns the answer parsed as JSON, or its raw text when it is not JSON (the caller asks for a correction) */
  async decide(request: DecisionRequest, signal: AbortSignal): Promise<unknown> {
    const combined = AbortSignal.any([signal, this.closing.signal]);
    const content = await this.complete(this.messages(request), answerSchema(request.parameters), combined);
    return parseAnswer(content);
  }

  /** Fails calls in flight and every later call. */
  close(): void {
    this.closing.abort(new AppError(ErrorCode.UNAVAILABLE, 'The language model client is closed'));
  }

  private messages(request: DecisionRequest): Array<{ role: string; content: string }> {
    const { node } = request;
    const lines = [
      `Step: ${node.displayName} (node type ${node.type}, id "${node.id}")`,
      node.description ? `What the step does: ${node.description}` : '',
      '',
      `Instructions: ${request.instructions.trim() || '(none)'}`,
      '',
      'Parameters to choose:',
      ...request.parameters.map(
        (p) => `- ${p.name} (${p.required ? 'required' : 'optional'}), JSON Schema ${JSON.stringify(p.schema)}${p.hint.trim() ? `\n  Hint: ${p.hint.trim()}` : ''}`,
      ),
      '',
      'Input of this step (JSON):',
      this.inputText(request.input),
    ];
    const messages = [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: lines.filter((line, i) => line !== '' || lines[i - 1] !== '').join('\n') },
    ];
    if (request.correction) {
      const { answer, problems } = request.correction;
      messages.push(
        { role: 'assistant', content: typeof answer === 'string' ? answer : JSON.stringify(answer) },
        {
          role: 'user',
          content: `That answer was refused: ${problems.map((p) => `${p.field} ${p.reason}`).join('; ')}. Reply again with the corrected JSON object only.`,
        },
      );
    }
    return messages;
  }

  private inputText(input: unknown): string {
    const json = JSON.stringify(input ?? null) ?? 'null';
    return json.length > this.maxInputChars ? `${json.slice(0, this.maxInputChars)}… (cut: ${json.length} characters in all)` : json;
  }

  private async complete(messages: object[], schema: { schema: JsonSchema; strict: boolean }, signal: AbortSignal): Promise<string> {
    let failure: AppError | undefined;
    const body = () => ({
      model: this.model,
      temperature: 0,
      messages,
      ...(this.structuredOutput ? { response_format: { type: 'json_schema', json_schema: { name: 'parameters', strict: schema.strict, schema: schema.schema } } } : {}),
    });
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      let outcome = await this.attempt(body(), signal);
      if ('unsupportedFormat' in outcome) {
        // The server works but does not know the format: the prompt alone asks for JSON, now and from now on.
        this.structuredOutput = false;
        outcome = await this.attempt(body(), signal);
      }
      if ('content' in outcome) return outcome.content;
      if ('unsupportedFormat' in outcome) throw outcome.unsupportedFormat;
      failure = outcome.retry;
      if (attempt === this.maxAttempts) break;
      const wait = Math.max(outcome.retryAfterMs ?? 0, this.backoffMs(attempt));
      if (wait > this.maxRetryAfterMs) {
        throw new AppError(ErrorCode.UPSTREAM_FAILED, `${failure.message}; not waiting ${Math.ceil(wait / 1000)} s to retry`, {
          retryable: true,
          cause: failure,
          details: { retryAfterMs: wait },
        });
      }
      try {
        await this.sleep(wait, signal);
      } catch (error) {
        throw signal.aborted ? signal.reason : error;
      }
    }
    throw new AppError(ErrorCode.UPSTREAM_FAILED, `${failure!.message} (gave up after ${this.maxAttempts} attempts)`, {
      retryable: true,
      cause: failure,
      details: failure!.details,
    });
  }

  /** One HTTP exchange. Resolves with the answer or what to do next; throws what must not be retried. */
  private async attempt(body: object, signal: AbortSignal): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.endpoint, { method: 'POST', headers: this.headers, body: JSON.stringify(body), signal: AbortSignal.any([signal, timeout]) });
      if (response.status === 429 || response.status >= 500) {
        return { retry: this.statusError(response.status, await this.upstreamMessage(response), true), retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) };
      }
      if (!response.ok) {
        const message = await this.upstreamMessage(response);
        const error = this.statusError(response.status, message, false);
        if (response.status === 400 && 'response_format' in body && /response_format|json_schema|structured/i.test(message)) return { unsupportedFormat: error };
        throw error;
      }
      text = await response.text();
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (signal.aborted) throw signal.reason;
      const reason = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : networkReason(error);
      return { retry: new AppError(ErrorCode.UPSTREAM_FAILED, `Language model endpoint unreachable: ${reason}`, { retryable: true, cause: error }) };
    }
    return { content: this.contentOf(text) };
  }

  private contentOf(text: string): string {
    const malformed = (why: string) => new AppError(ErrorCode.UPSTREAM_FAILED, `Language model endpoint answered an unexpected body: ${why}`);
    let body: { choices?: Array<{ message?: { content?: unknown; refusal?: unknown } }> };
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed('not JSON');
    }
    const message = Array.isArray(body?.choices) ? body.choices[0]?.message : undefined;
    if (!message) throw malformed('no choices[0].message');
    if (typeof message.refusal === 'string' && message.refusal) {
      throw new AppError(ErrorCode.UPSTREAM_FAILED, `The language model refused to choose: ${this.clip(message.refusal)}`);
    }
    if (typeof message.content !== 'string') throw malformed('choices[0].message.content is not text');
    return message.content;
  }

  private statusError(status: number, message: string, retryable: boolean): AppError {
    return new AppError(ErrorCode.UPSTREAM_FAILED, `Language model endpoint answered ${status}: ${message}`, { retryable, details: { status } });
  }

  /** The server's own explanation (OpenAI `error.message`, or `message`/`detail`/`error`), trimmed and key-free. */
  private async upstreamMessage(response: Response): Promise<string> {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const error = parsed.error;
      const candidate = (typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error) ?? parsed.message ?? parsed.detail;
      if (typeof candidate === 'string') message = candidate;
    } catch {
      // Not JSON: the raw text is the message.
    }
    return this.clip(message.trim() || response.statusText || 'no message');
  }

  private clip(message: string): string {
    const keyless = this.apiKey ? message.split(this.apiKey).join('[redacted]') : message;
    return keyless.length > UPSTREAM_MESSAGE_CHARS ? `${keyless.slice(0, UPSTREAM_MESSAGE_CHARS)}...` : keyless;
  }

  /** Exponential, with "equal jitter" so that runs throttled together do not retry together. */
  private backoffMs(failedAttempts: number): number {
    const ceiling = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** (failedAttempts - 1));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}

/** `https://host/v1/chat/completions` from that URL itself, or from `https://host` or `https://host/v1`. */
export function chatCompletionsUrl(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return /\/chat\/completions$/.test(trimmed) ? trimmed : `${trimmed.replace(/\/v1$/, '')}/v1/chat/completions`;
}

/**
 * The schema of the answer object. Only keywords every structured-output server understands are
 * kept (the full schemas are in the prompt, and the answer is validated anyway); `strict` needs a
 * type for every value, so a parameter of no declared type, or an object, turns it off.
 */
export function answerSchema(parameters: readonly DecidedParameter[]): { schema: JsonSchema; strict: boolean } {
  let strict = true;
  const properties: Record<string, JsonSchema> = {};
  for (const parameter of parameters) {
    const { schema, exact } = modelSchema(parameter.schema ?? {});
    strict &&= exact;
    properties[parameter.name] = parameter.required ? schema : nullable(schema);
  }
  return { schema: { type: 'object', properties, required: parameters.map((p) => p.name), additionalProperties: false }, strict };
}

function modelSchema(source: JsonSchema): { schema: JsonSchema; exact: boolean } {
  const schema: JsonSchema = {};
  if (typeof source.description === 'string') schema.description = source.description;
  let type = typeof source.type === 'string' ? source.type : undefined;
  if (Array.isArray(source.enum)) {
    schema.enum = source.enum;
    if (!type && source.enum.length && source.enum.every((v) => typeof v === 'string')) type = 'string';
  }
  if (type) schema.type = type;
  let exact = type !== undefined && type !== 'object';
  if (type === 'array') {
    const items = typeof source.items === 'object' && source.items !== null ? modelSchema(source.items as JsonSchema) : { schema: {}, exact: false };
    schema.items = items.schema;
    exact &&= items.exact;
  }
  return { schema, exact };
}

function nullable(schema: JsonSchema): JsonSchema {
  return {
    ...schema,
    ...(typeof schema.type === 'string' ? { type: [schema.type, 'null'] } : {}),
    ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}),
  };
}

/** Models wrap JSON in code fences or a sentence now and then; the object inside is the answer. */
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

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
