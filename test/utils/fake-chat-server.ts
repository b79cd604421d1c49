import { ReceivedJsonRequest, ScriptedJsonServer, WrittenAnswer } from './scripted-json-server';

/** What the fake answers instead of a reply: a completion with this text, or any written answer. */
export type ScriptedChatAnswer = { content: string } | WrittenAnswer;

export interface ChatMessage {
  role: string;
  content: string;
}

type ChatBody = { model?: string; messages?: ChatMessage[]; response_format?: any; temperature?: number };
export type ChatRequest = ReceivedJsonRequest<ChatBody>;

/**
 * An OpenAI-compatible `POST /v1/chat/completions` server on 127.0.0.1 for tests. Scripted answers
 * go first; otherwise `reply` writes the assistant's text for the request. With `apiKey` a wrong
 * bearer token gets 401; with `refuseResponseFormat` a request carrying `response_format` gets the
 * 400 of a server that does not know it.
 */
export class FakeChatServer extends ScriptedJsonServer<ChatBody, ScriptedChatAnswer> {
  reply: (request: ChatRequest) => string = () => '{}';

  private constructor(private readonly options: { apiKey?: string; refuseResponseFormat?: boolean }) {
    super();
  }

  static start(options: { apiKey?: string; refuseResponseFormat?: boolean } = {}): Promise<FakeChatServer> {
    return new FakeChatServer(options).listen();
  }

  protected override write(answer: ScriptedChatAnswer, request: ChatRequest): WrittenAnswer {
    return 'content' in answer ? { status: 200, body: completion(answer.content, request.body?.model) } : answer;
  }

  protected answer(request: ChatRequest): ScriptedChatAnswer {
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions')
      return { status: 404, body: { error: { message: `no route ${request.path}` } } };
    if (this.options.apiKey && request.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return { status: 401, body: { error: { message: `Incorrect API key provided: ${request.headers.authorization ?? 'none'}` } } };
    }
    if (!Array.isArray(request.body?.messages)) return { status: 400, body: { error: { message: 'messages is required' } } };
    if (this.options.refuseResponseFormat && request.body?.response_format) {
      return { status: 400, body: { error: { message: 'Unrecognized request argument supplied: response_format (json_schema)' } } };
    }
    return { content: this.reply(request) };
  }
}

function completion(content: string, model: unknown) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof model === 'string' ? model : 'fake',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** The step's input as the decider wrote it into the prompt. */
export function promptInput(request: ChatRequest): unknown {
  const prompt = request.body?.messages?.find((m) => m.role === 'user')?.content ?? '';
  const marker = 'Input of this step (JSON):\n';
  return JSON.parse(prompt.slice(prompt.indexOf(marker) + marker.length));
}

/** The user prompt of the first question. */
export function promptText(request: ChatRequest): string {
  return request.body?.messages?.find((m) => m.role === 'user')?.content ?? '';
}
