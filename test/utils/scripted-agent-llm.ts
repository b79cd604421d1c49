import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A message as the server receives it (OpenAI wire format). */
export interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface AgentLlmRequest {
  headers: IncomingHttpHeaders;
  body: {
    model?: string;
    messages: WireMessage[];
    tools?: { type: string; function: { name: string; description?: string; parameters: unknown } }[];
    stream?: boolean;
  };
}

/** What the scripted model says: text, or tool calls (with their arguments as objects). */
export type ScriptedTurn = { content: string } | { toolCalls: { name: string; arguments: unknown }[] } | { status: number; error: string };

/**
 * The script: what to answer a request, told how many model turns of the current question came
 * before it (assistant messages after the last user message), so each run follows its own script
 * whatever else runs at the same time.
 */
export type AgentScript = (request: AgentLlmRequest, turn: number) => ScriptedTurn;

/**
 * An OpenAI-compatible `POST /v1/chat/completions` with tool calling on 127.0.0.1, answering from a
 * deterministic script. Streams (server-sent events, the text in pieces, tool-call arguments in two
 * pieces, usage last) when the request asks `stream: true`; answers one JSON document otherwise.
 */
export class ScriptedAgentLlm {
  readonly requests: AgentLlmRequest[] = [];
  script: AgentScript = () => ({ content: 'no script' });
  private readonly server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions'))
        return json(res, 404, { error: { message: `no route ${req.url}` } });
      if (this.apiKey && req.headers.authorization !== `Bearer ${this.apiKey}`)
        return json(res, 401, { error: { message: 'Incorrect API key provided' } });
      let body: AgentLlmRequest['body'];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return json(res, 400, { error: { message: 'body is not JSON' } });
      }
      if (!Array.isArray(body.messages)) return json(res, 400, { error: { message: 'messages is required' } });
      const request = { headers: req.headers, body };
      if (this.keepRequests) this.requests.push(request);
      const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
      const turn = body.messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
      const answer = this.script(request, turn);
      if ('status' in answer) return json(res, answer.status, { error: { message: answer.error } });
      const model = body.model ?? 'scripted-model';
      const usage = { prompt_tokens: 10 * body.messages.length, completion_tokens: 'content' in answer ? answer.content.length : 5 };
      const calls =
        'toolCalls' in answer
          ? answer.toolCalls.map((call, index) => ({
              id: `call_${turn}_${index}`,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.arguments) },
            }))
          : [];
      if (!body.stream) {
        const message =
          'content' in answer ? { role: 'assistant', content: answer.content } : { role: 'assistant', content: null, tool_calls: calls };
        return json(res, 200, {
          id: 'chatcmpl-scripted',
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (delta: object, extra: object = {}) =>
        res.write(
          `data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta }], ...extra })}\n\n`,
        );
      send({ role: 'assistant', content: '' });
      if ('content' in answer) {
        for (const piece of answer.content.match(/.{1,4}/gs) ?? []) send({ content: piece });
      }
      calls.forEach((call, index) => {
        const half = Math.ceil(call.function.arguments.length / 2);
        send({
          tool_calls: [
            {
              index,
              id: call.id,
              type: 'function',
              function: { name: call.function.name, arguments: call.function.arguments.slice(0, half) },
            },
          ],
        });
        send({ tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] });
      });
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
    });
  });

  private constructor(
    private readonly apiKey: string | undefined,
    private readonly keepRequests: boolean,
  ) {}

  static async start(options: { apiKey?: string; keepRequests?: boolean } = {}): Promise<ScriptedAgentLlm> {
    const server = new ScriptedAgentLlm(options.apiKey, options.keepRequests ?? true);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  /** Base URL without `/v1`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** The text of the last user message of a request. */
export function lastUserText(request: AgentLlmRequest): string {
  const users = request.body.messages.filter((m) => m.role === 'user');
  return users[users.length - 1]?.content ?? '';
}

/** The tool results the request carries since the last user message, parsed when JSON. */
export function toolResults(request: AgentLlmRequest): unknown[] {
  const lastUser = request.body.messages.map((m) => m.role).lastIndexOf('user');
  return request.body.messages
    .slice(lastUser + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => {
      try {
        return JSON.parse(m.content ?? '');
      } catch {
        return m.content;
      }
    });
}
