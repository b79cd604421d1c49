export interface EmbedOptions {
  /** Aborting rejects the call with AppError(CANCELED), or with the signal's reason when that is an AppError. */
  signal?: AbortSignal;
}

/**
 * Turns text into vectors for the search index. The DI token of the embeddings port: inject
 * `Embedder`, never an adapter. Every vector is L2-normalised, so cosine similarity is a dot product.
 */
export abstract class Embedder {
  /** Stored with every indexed vector: vectors of different models must never be compared. */
  abstract readonly model: string;

  /**
   * Length of every vector. A remote embedder whose dimension was not configured reports 0 until
   * its first answer; `warmUp()` makes it known.
   */
  abstract readonly dimension: number;

  /** One vector per text, in the order of `texts`. An empty array answers an empty array. */
  abstract embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]>;

  embedQuery(text: string, options?: EmbedOptions): Promise<Float32Array> {
    return this.embed([text], options).then(([vector]) => vector);
  }

  /** Gets ready to answer without a cold start (loads models, learns the dimension). */
  async warmUp(): Promise<void> {}

  abstract close(): Promise<void>;
}
