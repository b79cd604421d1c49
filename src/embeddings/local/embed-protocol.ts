/** Tasks between the local embedder's pool (main thread) and `embed.worker`. */

/** Texts to embed in one model call; none asks only that the thread be started (its model loaded). */
export interface EmbedRequest {
  texts: string[];
}

export type EmbedResponse =
  /** One L2-normalised vector per text, each on its own buffer (copied: 2 KB a vector, against ~30 ms of inference). */
  | { vectors: Float32Array[] }
  /** The model failed on these texts; the thread goes on. */
  | { error: string };
