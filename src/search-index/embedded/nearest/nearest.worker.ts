import { parentPort, workerData } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { CollectionVectors, probedCellsPerShard } from './collection-vectors';
import { freeNow } from './free-now';
import type { NearestRequest, NearestResponse, NearestWorkerData } from './nearest-protocol';
import { ShareReader } from './share-reader';

/**
 * A search thread: its share of every collection's vectors (the rows whose seq falls to it, see
 * NearestThreads) and their cells live here, so a search never holds the service's event loop.
 * Messages are handled in arrival order (a search sees every add and remove sent before it); loads
 * (the thread reading its share from the store) and cells go in steps while no message waits.
 */
const { shards, shard } = workerData as NearestWorkerData;
const probedCells = probedCellsPerShard(shards);
const collections = new Map<string, CollectionVectors>();
/**
 * Loads under way, read by this thread from the store. A message handled between two steps is
 * consistent with them: it was posted after its commit, and each step reads what is committed then
 * (a row read twice is replaced; a removed row is no longer there to read).
 */
const loads = new Map<string, { id: number; vectors: CollectionVectors; reader: ShareReader }>();
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
  // Idle: one step of a load, else of computing cells, then look at the inbox again.
  for (const [collectionId, load] of loads) {
    loadStep(collectionId, load);
    schedule();
    return;
  }
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
      addBatch(collection(message.collectionId, message.dimension), message);
      return;
    case 'load': {
      endLoad(message.collectionId, { type: 'error', id: -1, message: 'A later load of the collection took its place' });
      const vectors = collection(message.collectionId, message.dimension);
      vectors.beginLoad(message.rows);
      if (message.source && message.id !== undefined) {
        const reader = new ShareReader(message.collectionId, message.dimension, message.source, shards, shard);
        loads.set(message.collectionId, { id: message.id, vectors, reader });
      }
      return;
    }
    case 'loaded':
      collections.get(message.collectionId)?.endLoad();
      return;
    case 'read': {
      const vectors = collection(message.collectionId, message.dimension);
      const reader = new ShareReader(message.collectionId, message.dimension, message.source, shards, shard);
      for (let rows = reader.next(); rows; rows = reader.next()) addBatch(vectors, rows);
      return;
    }
    case 'sync':
      reply({ type: 'synced', id: message.id });
      return;
    case 'remove':
      collections.get(message.collectionId)?.remove(message.seqs);
      return;
    case 'drop':
      collections.delete(message.collectionId);
      endLoad(message.collectionId, { type: 'loaded', id: -1 });
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

/**
 * Adds a batch of rows (a message's, or read from the store), then frees its floats at once: each
 * batch is megabytes of floats (2,048 rows of 512 floats: 4 MiB), which a thread that allocates
 * little on its JavaScript heap freed only at its next collection, dozens of batches later, and
 * its malloc arena kept the room they took.
 */
function addBatch(vectors: CollectionVectors, rows: { seqs: ArrayLike<number>; fileIds: string[]; vectors: Float32Array }): void {
  vectors.add(rows.seqs, rows.fileIds, rows.vectors, availableParallelism());
  freeNow(rows.vectors);
}

/** Reads and adds one step of a load; at its end, the cells are due and the loader is answered. */
function loadStep(collectionId: string, load: { vectors: CollectionVectors; reader: ShareReader }): void {
  try {
    const rows = load.reader.next();
    if (rows) addBatch(load.vectors, rows);
    else endLoad(collectionId, { type: 'loaded', id: -1 });
  } catch (error) {
    // The rows read so far stay (a load asked again replaces them); the loader is told why.
    endLoad(collectionId, { type: 'error', id: -1, message: (error as Error).message });
  }
}

/** Ends the collection's load under way, if any, answering its loader with `response` (under its id). */
function endLoad(collectionId: string, response: Extract<NearestResponse, { type: 'loaded' | 'error' }>): void {
  const load = loads.get(collectionId);
  if (!load) return;
  loads.delete(collectionId);
  load.vectors.endLoad();
  reply({ ...response, id: load.id });
}

function reply(response: NearestResponse, transfer: ArrayBuffer[] = []): void {
  port.postMessage(response, transfer);
}
