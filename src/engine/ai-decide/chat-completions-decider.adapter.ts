import { AppError, ErrorCode } from '../../common/app-error';
import { openAiCompatibleUrl, RetryingJsonClient } from '../../common/retrying-json-client';
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

const SYSTEM_PROMPT =
  'You fill in parameters of one step of an automated workflow. Reply with one JSON object and nothing else: ' +
  'its keys are exactly the parameter names asked for, and each value is valid against that parameter\'s JSON Schema. ' +
  'Use null for an optional parameter you choose to leave out.';

/**
 * AI Decide over any server speaking OpenAI's `POST /v1/chat/completions` (OpenAI, Azure-style
 * proxies, vLLM, llama.cpp, Ollama, LiteLLM...). The answer is constrained with a `json_schema`
 * response format where the server supports it; a server that refuses that format is asked again
 * with the prompt alone, once, and from then on. 429 and 5xx answers and network failures are
 * retried with backoff.
 */
export class ChatCompletionsDecider extends ParameterDecider {
  readonly model: string;
  private readonly client: RetryingJsonClient;
  private readonly maxInputChars: number;
  private readonly closing = new AbortController();
  /** Cleared when the server refuses `response_format: json_schema`. */
  private structuredOutput = true;

  constructor(options: ChatCompletionsDeciderOptions) {
    super();
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
    });
    this.maxInputChars = options.maxInputChars ?? 20_000;
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
    const body = () => ({
      model: this.model,
      temperature: 0,
      messages,
      ...(this.structuredOutput ? { response_format: { type: 'json_schema', json_schema: { name: 'parameters', strict: schema.strict, schema: schema.schema } } } : {}),
    });
    const text = await this.client.post(body, signal, {
      adapt: ({ status, message, body: sent }) => {
        if (status !== 400 || !('response_format' in sent) || !/response_format|json_schema|structured/i.test(message)) return false;
        // The server works but does not know the format: the prompt alone asks for JSON, now and from now on.
        this.structuredOutput = false;
        return true;
      },
    });
    return this.contentOf(text);
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
      throw new AppError(ErrorCode.UPSTREAM_FAILED, `The language model refused to choose: ${this.client.clip(message.refusal)}`);
    }
    if (typeof message.content !== 'string') throw malformed('choices[0].message.content is not text');
    return message.content;
  }
}

/** `https://host/v1/chat/completions` from that URL itself, or from `https://host` or `https://host/v1`. */
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
