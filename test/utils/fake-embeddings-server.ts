import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake answers instead of embeddings: a status and body, a dropped socket, or silence. */
export type ScriptedAnswer =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { dropConnection: true }
  | { hang: true };

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: { model?: unknown; input?: unknown } | undefined;
}

/**
 * An OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 for tests. Vectors are deterministic
 * hashes of the text, deliberately not normalised, and `data` comes back in reverse index order so
 * a client that trusts array order instead of `index` fails.
 */
export class FakeEmbeddingsServer {
  readonly requests: ReceivedRequest[] = [];
  private readonly script: ScriptedAnswer[] = [];

  private constructor(
    private readonly server: Server,
    /** Length of the vectors it answers; change it to play a server whose model changed. */
    public dimension: number,
    private readonly apiKey?: string,
  ) {}

  static async start(options: { dimension?: number; apiKey?: string } = {}): Promise<FakeEmbeddingsServer> {
    const server = createServer();
    const fake = new FakeEmbeddingsServer(server, options.dimension ?? 64, options.apiKey);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let body: ReceivedRequest['body'];
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined;
        }
        fake.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
        const answer = fake.script.shift() ?? fake.answer(req.method, req.url, req.headers, body);
        if ('dropConnection' in answer) return req.socket.destroy();
        if ('hang' in answer) return;
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** Base URL without `/v1`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers the next requests with these, in order, then goes back to embedding. */
  answerNext(...answers: ScriptedAnswer[]): void {
    this.script.push(...answers);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
  }

  private answer(
    method: string | undefined,
    path: string | undefined,
    headers: IncomingHttpHeaders,
    body: ReceivedRequest['body'],
  ): ScriptedAnswer {
    const error = (status: number, message: string) => ({ status, body: { error: { message, type: 'invalid_request_error' } } });
    if (method !== 'POST' || path !== '/v1/embeddings') return error(404, `No route ${method} ${path}`);
    if (this.apiKey && headers.authorization !== `Bearer ${this.apiKey}`) return error(401, 'Incorrect API key provided');
    const input = body?.input;
    if (typeof body?.model !== 'string') return error(400, "'model' is required");
    if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === 'string' && t.length > 0)) {
      return error(400, "'input' must be a non-empty array of non-empty strings");
    }
    const data = input.map((text: string, index) => ({
      object: 'embedding',
      index,
      embedding: hashVector(text, this.dimension),
    }));
    const usage = { prompt_tokens: 0, total_tokens: 0 };
    return { status: 200, body: { object: 'list', model: body.model, data: data.reverse(), usage } };
  }
}

/** Deterministic pseudo-random vector of `text` (FNV-1a seed, xorshift), with a length far from 1. */
export function hashVector(text: string, dimension: number): number[] {
  let state = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) state = Math.imul(state ^ text.charCodeAt(i), 0x01000193);
  state ||= 1; // xorshift never leaves zero
  const vector: number[] = [];
  for (let i = 0; i < dimension; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    vector.push(((state >>> 0) / 0xffffffff - 0.5) * 6);
  }
  return vector;
}
