import { ChatCompletionsClient, ChatCompletionsOptions, parseAnswer } from './chat-completions.client';
import type { JsonSchema } from '../../common/class-schema';
import { DecidedParameter, DecisionRequest, ParameterDecider } from '../../domain/parameter-decider.port';

export interface ChatCompletionsDeciderOptions extends ChatCompletionsOptions {
  /** Longest JSON text of the node's input put in the prompt; the rest is cut. */
  maxInputChars?: number;
}

const SYSTEM_PROMPT =
  'You fill in parameters of one step of an automated workflow. Reply with one JSON object and nothing else: ' +
  "its keys are exactly the parameter names asked for, and each value is valid against that parameter's JSON Schema. " +
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
  private readonly client: ChatCompletionsClient;
  private readonly maxInputChars: number;

  constructor(options: ChatCompletionsDeciderOptions) {
    super();
    this.model = options.model;
    this.client = new ChatCompletionsClient(options);
    this.maxInputChars = options.maxInputChars ?? 20_000;
  }

  /** @returns the answer parsed as JSON, or its raw text when it is not JSON (the caller asks for a correction) */
  async decide(request: DecisionRequest, signal: AbortSignal): Promise<unknown> {
    const answer = await this.client.complete(
      { messages: this.messages(request), temperature: 0, responseSchema: { name: 'parameters', ...answerSchema(request.parameters) } },
      signal,
    );
    return parseAnswer(answer.content);
  }

  /** Fails calls in flight and every later call. */
  close(): void {
    this.client.close();
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
        (p) =>
          `- ${p.name} (${p.required ? 'required' : 'optional'}), JSON Schema ${JSON.stringify(p.schema)}${p.hint.trim() ? `\n  Hint: ${p.hint.trim()}` : ''}`,
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
    const items =
      typeof source.items === 'object' && source.items !== null ? modelSchema(source.items as JsonSchema) : { schema: {}, exact: false };
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

export { parseAnswer };
