import { Embedder, EmbedOptions } from '../domain/embedder.port';
import { abortError } from '../embeddings/vectors';

export interface CoalescingEmbedderOptions {
  /** Combined calls in flight at once; callers beyond wait and are combined. */
  maxInFlight: number;
  /** A call of at least this many texts goes straight through, uncombined (a large file's batch). */
  passThroughTexts: number;
}

interface Waiting {
  texts: string[];
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
  settled: boolean;
}

/**
 * Many small files each embed a text or two; one call per file leaves the local embedder batches
 * of one, far slower per text than its batches of eight. Small calls that arrive while the
 * embedder is busy wait and go together as one call when it has room (group commit: no timer, so
 * a call on an idle embedder starts at once). A caller's abort rejects its own call only.
 */
export class CoalescingEmbedder extends Embedder {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly inner: Embedder,
    private readonly options: CoalescingEmbedderOptions = { maxInFlight: 2, passThroughTexts: 64 },
  ) {
    super();
  }

  get model(): string {
    return this.inner.model;
  }

  get dimension(): number {
    return this.inner.dimension;
  }

  embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    if (texts.length >= this.options.passThroughTexts) return this.inner.embed(texts, options);
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<Float32Array[]>((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        entry.reject(abortError(signal!));
      };
      const entry: Waiting = {
        texts,
        settled: false,
        resolve: (vectors) => {
          if (entry.settled) return;
          entry.settled = true;
          signal?.removeEventListener('abort', onAbort);
          resolve(vectors);
        },
        reject: (error) => {
          if (entry.settled) return;
          entry.settled = true;
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
      this.pump();
    });
  }

  override warmUp(): Promise<void> {
    return this.inner.warmUp();
  }

  /** The inner embedder belongs to whoever made it. */
  async close(): Promise<void> {}

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length) {
      const group: Waiting[] = [];
      let count = 0;
      while (this.waiting.length && (group.length === 0 || count + this.waiting[0].texts.length <= this.options.passThroughTexts)) {
        const entry = this.waiting.shift()!;
        group.push(entry);
        count += entry.texts.length;
      }
      this.inFlight++;
      this.inner
        .embed(group.flatMap((entry) => entry.texts))
        .then(
          (vectors) => {
            let at = 0;
            for (const entry of group) {
              entry.resolve(vectors.slice(at, at + entry.texts.length));
              at += entry.texts.length;
            }
          },
          (error: unknown) => group.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}
