import { ReceivedJsonRequest, ScriptedJsonServer, WrittenAnswer } from './scripted-json-server';

type EmbeddingsBody = { model?: unknown; input?: unknown };
type ReceivedRequest = ReceivedJsonRequest<EmbeddingsBody>;

/**
 * An OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 for tests. Vectors are deterministic
 * hashes of the text, deliberately not normalised, and `data` comes back in reverse index order so
 * a client that trusts array order instead of `index` fails.
 */
export class FakeEmbeddingsServer extends ScriptedJsonServer<EmbeddingsBody> {
  private constructor(
    /** Length of the vectors it answers; change it to play a server whose model changed. */
    public dimension: number,
    private readonly apiKey?: string,
  ) {
    super();
  }

  static start(options: { dimension?: number; apiKey?: string } = {}): Promise<FakeEmbeddingsServer> {
    return new FakeEmbeddingsServer(options.dimension ?? 64, options.apiKey).listen();
  }

  protected answer({ method, path, headers, body }: ReceivedRequest): WrittenAnswer {
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
