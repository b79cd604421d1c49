import { parentPort, workerData } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { CollectionVectors, probedCellsPerShard } from './collection-vectors';
import type { NearestRequest, NearestResponse, NearestWorkerData } from './nearest-protocol';

/**
 * A search thread: its share of every collection's vectors (the rows whose seq falls to it, see
 * NearestThreads) and their cells live here, so a search never holds the service's event loop.
 * Messages are handled in arrival order (a search sees every add and remove sent before it); cells
 * are computed in steps while no message waits.
 */
const { shards } = workerData as NearestWorkerData;
const probedCells = probedCellsPerShard(shards);
const collections = new Map<string, CollectionVectors>();
const inbox: NearestRequest[] = [];
let scheduled = false;
const port = parentPort!;

port.on('message', (message: NearestRequest) => {
  inbox.push(message);
  schedule();
});

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(pump);
}

function pump(): void {
  scheduled = false;
  while (inbox.length > 0) handle(inbox.shift()!);
  // Idle: one step of computing cells, then look at the inbox again.
  for (const vectors of collections.values()) {
    if (vectors.building) {
      vectors.buildStep(availableParallelism());
      schedule();
      return;
    }
  }
}

function collection(collectionId: string, dimension: number): CollectionVectors {
  let vectors = collections.get(collectionId);
  if (!vectors || vectors.dimension !== dimension) {
    vectors = new CollectionVectors(dimension, probedCells);
    collections.set(collectionId, vectors);
  }
  return vectors;
}

function handle(message: NearestRequest): void {
  switch (message.type) {
    case 'add':
      collection(message.collectionId, message.dimension).add(message.seqs, message.fileIds, message.vectors, availableParallelism());
      return;
    case 'load':
      collection(message.collectionId, message.dimension).beginLoad(message.rows);
      return;
    case 'loaded':
      collections.get(message.collectionId)?.endLoad();
      return;
    case 'sync':
      reply({ type: 'synced', id: message.id });
      return;
    case 'remove':
      collections.get(message.collectionId)?.remove(message.seqs);
      return;
    case 'drop':
      collections.delete(message.collectionId);
      return;
    case 'close':
      // From JavaScript, between native calls: the thread ends without the abort a terminate() risks.
      process.exit(0);
    case 'search':
      try {
        const hits = collections.get(message.collectionId)?.search(message.query, message.k, message.fileIds) ?? [];
        const seqs = Float64Array.from(hits, (h) => h.seq);
        const distances = Float32Array.from(hits, (h) => h.distance);
        reply({ type: 'hits', id: message.id, seqs, distances }, [seqs.buffer, distances.buffer]);
      } catch (error) {
        reply({ type: 'error', id: message.id, message: (error as Error).message });
      }
      return;
    case 'stats':
      reply({
        type: 'stats',
        id: message.id,
        stats: {
          collections: [...collections].map(([collectionId, v]) => ({
            collectionId,
            size: v.size,
            cells: v.cells,
            building: v.building,
          })),
        },
      });
      return;
  }
}

function reply(response: NearestResponse, transfer: ArrayBuffer[] = []): void {
  port.postMessage(response, transfer);
}
