import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake answers instead of a completion: a status and body, a dropped socket, or silence. */
export type ScriptedChatAnswer =
  | { content: string }
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { dropConnection: true }
  | { hang: true };

export interface ChatMessage {
  role: string;
  content: string;
}

export interface ChatRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: { model?: string; messages?: ChatMessage[]; response_format?: any; temperature?: number } | undefined;
}

/**
 * An OpenAI-compatible `POST /v1/chat/completions` server on 127.0.0.1 for tests. Scripted answers
 * go first; otherwise `reply` writes the assistant's text for the request. With `apiKey` a wrong
 * bearer token gets 401; with `refuseResponseFormat` a request carrying `response_format` gets the
 * 400 of a server that does not know it.
 */
export class FakeChatServer {
  readonly requests: ChatRequest[] = [];
  reply: (request: ChatRequest) => string = () => '{}';
  private readonly script: ScriptedChatAnswer[] = [];

  private constructor(
    private readonly server: Server,
    private readonly options: { apiKey?: string; refuseResponseFormat?: boolean },
  ) {}

  static async start(options: { apiKey?: string; refuseResponseFormat?: boolean } = {}): Promise<FakeChatServer> {
    const server = createServer();
    const fake = new FakeChatServer(server, options);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let body: ChatRequest['body'];
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined;
        }
        const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
        fake.requests.push(request);
        const answer = fake.script.shift() ?? fake.answer(request);
        if ('dropConnection' in answer) return req.socket.destroy();
        if ('hang' in answer) return;
        const reply = 'content' in answer ? { status: 200, headers: {}, body: completion(answer.content, body?.model) } : answer;
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** Base URL without `/v1`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next requests get these answers, in order, before `reply` takes over again. */
  answerNext(...answers: ScriptedChatAnswer[]): void {
    this.script.push(...answers);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(request: ChatRequest): ScriptedChatAnswer {
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions') return { status: 404, body: { error: { message: `no route ${request.path}` } } };
    if (this.options.apiKey && request.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return { status: 401, body: { error: { message: `Incorrect API key provided: ${request.headers.authorization ?? 'none'}` } } };
    }
    if (!Array.isArray(request.body?.messages)) return { status: 400, body: { error: { message: 'messages is required' } } };
    if (this.options.refuseResponseFormat && request.body?.response_format) {
      return { status: 400, body: { error: { message: "Unrecognized request argument supplied: response_format (json_schema)" } } };
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
