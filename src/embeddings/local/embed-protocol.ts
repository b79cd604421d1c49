/** Messages between the local embedder's pool (main thread) and `embed.worker`. */

export interface EmbedRequest {
  id: number;
  texts: string[];
}

export type WorkerMessage =
  /** The model is loaded; sent once, right after start. */
  | { type: 'ready' }
  | { type: 'load-failed'; error: string }
  /** One L2-normalised vector per text, each on its own (transferred) buffer. */
  | { type: 'embedded'; id: number; vectors: Float32Array[] }
  | { type: 'failed'; id: number; error: string };
