import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../../common/app-error';
import { workerFile } from '../../../common/worker-path';
import {
  type LoadSource,
  type NearestRequest,
  type NearestResponse,
  type NearestStats,
  type NearestWorkerData,
  shardOf,
} from './nearest-protocol';

/** How long close() waits for a thread to end itself before terminating it (a build step takes well under a second). */
const CLOSE_GRACE_MS = 30_000;
/**
 * Search threads at most: each search asks every thread, so past a few the messages and the
 * per-thread probes of the centroids cost more than the extra cores give one search.
 */
const MAX_SEARCH_THREADS = 4;
/**
 * A search thread's young generation, in MiB. What its JavaScript allocates lives for one message
 * or one step (a search's hits, a read step's parsed seqs and file ids); its codes and cells are
 * buffers outside the heap. V8's default young generation (48 MiB) let each grow for nothing: at
 * 300,000 passages the API process's V8 heap pages after the searches were 94 MiB against 113.
 */
export const SEARCH_THREAD_YOUNG_GENERATION_MB = 4;
/** One search thread per core, up to MAX_SEARCH_THREADS. */
export const SEARCH_THREADS = Math.max(1, Math.min(MAX_SEARCH_THREADS, availableParallelism()));

type Pending = { shard: number; resolve(response: NearestResponse): void; reject(error: Error): void };
type Posted = Exclude<NearestRequest, { id: number }>;

/**
 * The main thread's handle on the search threads. Each collection's rows are shared among them by
 * seq (shardOf: by vector pair), and each thread computes cells of its own share: a large collection's
 * build runs on every core at once, each placing its rows among √(n / threads) centroids, and a
 * search asks every thread, whose nearest rows are merged here, so several searches at once keep
 * every core busy. The codes are held once: usearch's native scan reads no SharedArrayBuffer, so
 * threads cannot share rows, only divide them.
 *
 * Adds, removes and drops are posted without waiting (each thread handles messages in order, so a
 * later search sees them); searches and stats wait for every thread's answer. A thread that dies
 * fails what it held and is started again on the next message; `generation` tells the owner that a
 * thread holds nothing, so it loads collections again (rows the other threads hold are replaced).
 */
export class NearestThreads {
  private readonly workers: (Worker | undefined)[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private started = 0;

  constructor(
    readonly shards = SEARCH_THREADS,
    private readonly workerPath = workerFile(__dirname, 'nearest.worker'),
  ) {
    this.workers = Array.from({ length: shards }, () => undefined);
  }

  /** Which threads are (now) running: a new value means a thread that holds nothing yet. */
  get generation(): number {
    for (let shard = 0; shard < this.shards; shard++) this.thread(shard);
    return this.started;
  }

  /** Adds and removes go to the thread of each row's seq; the other messages to every thread. */
  post(message: Posted, transfer: ArrayBuffer[] = []): void {
    if (this.shards === 1) return this.thread(0).postMessage(message, transfer);
    switch (message.type) {
      case 'add':
        return this.postAdd(message);
      case 'remove':
        return this.bySeq(message.seqs, (shard, rows) => {
          const seqs = Float64Array.from(rows, (i) => message.seqs[i]);
          this.thread(shard).postMessage({ ...message, seqs }, [seqs.buffer]);
        });
      case 'load':
        return this.toEvery({ ...message, rows: Math.ceil(message.rows / this.shards) });
      default:
        return this.toEvery(message);
    }
  }

  /** The `k` nearest rows of the collection: each thread's `k` nearest, merged. */
  async search(
    collectionId: string,
    query: Float32Array,
    k: number,
    fileIds?: string[],
  ): Promise<{ seqs: Float64Array; distances: Float32Array }> {
    const answers = await Promise.all(
      this.workers.map(async (_, shard) => {
        const copy = Float32Array.from(query);
        const response = await this.request(shard, (id) => ({ type: 'search', id, collectionId, query: copy, k, fileIds }), [copy.buffer]);
        if (response.type !== 'hits') throw new AppError(ErrorCode.INTERNAL, 'A search thread answered a search with something else');
        return response;
      }),
    );
    if (answers.length === 1) return answers[0];
    const hits = answers.flatMap(({ seqs, distances }) => Array.from(seqs, (seq, i) => ({ seq, distance: distances[i] })));
    hits.sort((a, b) => a.distance - b.distance);
    const nearest = hits.slice(0, k);
    return { seqs: Float64Array.from(nearest, (h) => h.seq), distances: Float32Array.from(nearest, (h) => h.distance) };
  }

  /**
   * Every thread reads its share of the collection's rows in `source` from the store itself (see
   * share-reader.ts) and computes its cells once it holds them; resolves when every thread holds its
   * rows. Messages posted meanwhile are handled between the threads' read steps.
   */
  async load(collectionId: string, dimension: number, rows: number, source: LoadSource): Promise<void> {
    const share = Math.ceil(rows / this.shards);
    await Promise.all(
      this.workers.map(async (_, shard) => {
        const response = await this.request(shard, (id) => ({ type: 'load', id, collectionId, dimension, rows: share, source }));
        if (response.type !== 'loaded') throw new AppError(ErrorCode.INTERNAL, 'A search thread answered a load with something else');
      }),
    );
  }

  /** Resolves once every thread has handled every message posted before. */
  async sync(): Promise<void> {
    await Promise.all(this.workers.map((_, shard) => this.request(shard, (id) => ({ type: 'sync', id }))));
  }

  /** Each collection's rows and cells over all threads; building while any thread is. */
  async stats(): Promise<NearestStats> {
    const answers = await Promise.all(this.workers.map((_, shard) => this.request(shard, (id) => ({ type: 'stats', id }))));
    const merged = new Map<string, NearestStats['collections'][number]>();
    for (const response of answers) {
      if (response.type !== 'stats') throw new AppError(ErrorCode.INTERNAL, 'A search thread answered stats with something else');
      for (const c of response.stats.collections) {
        const sum = merged.get(c.collectionId);
        merged.set(
          c.collectionId,
          sum ? { ...sum, size: sum.size + c.size, cells: sum.cells + c.cells, building: sum.building || c.building } : { ...c },
        );
      }
    }
    return { collections: [...merged.values()] };
  }

  /**
   * Asks every thread to end itself and waits until all have. Never `terminate()` while one may be
   * in a native scan: usearch's binding then throws a Napi::Error it cannot hand to JavaScript, and
   * `terminate called after throwing an instance of 'Napi::Error'` aborts the whole process (a
   * process.exit() of the main thread does the same; both reproduced). A thread reads the message
   * between two build steps or messages, each bounded; a thread silent for CLOSE_GRACE_MS is
   * terminated anyway.
   */
  async close(): Promise<void> {
    this.closed = true;
    const workers = [...this.workers];
    this.workers.fill(undefined);
    this.failPending(new AppError(ErrorCode.UNAVAILABLE, 'The vector index is closed'));
    await Promise.all(
      workers.map(async (worker) => {
        if (!worker) return;
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        // Held open until the thread has ended: a process that exits meanwhile would terminate it.
        worker.ref();
        worker.postMessage({ type: 'close' } satisfies NearestRequest);
        const grace = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
        await exited;
        clearTimeout(grace);
      }),
    );
  }

  /** Each thread gets the rows of its seqs, in copies of their own (the caller's buffers are left as they are). */
  private postAdd(message: Extract<Posted, { type: 'add' }>): void {
    const d = message.dimension;
    this.bySeq(message.seqs, (shard, rows) => {
      const seqs = Float64Array.from(rows, (i) => message.seqs[i]);
      const vectors = new Float32Array(rows.length * d);
      rows.forEach((i, n) => vectors.set(message.vectors.subarray(i * d, (i + 1) * d), n * d));
      const fileIds = rows.map((i) => message.fileIds[i]);
      this.thread(shard).postMessage({ ...message, seqs, fileIds, vectors }, [seqs.buffer, vectors.buffer]);
    });
  }

  /** `post(shard, rows)` for each thread that holds some of `seqs`, with the indexes of those seqs. */
  private bySeq(seqs: Float64Array, post: (shard: number, rows: number[]) => void): void {
    const rows = Array.from({ length: this.shards }, () => [] as number[]);
    seqs.forEach((seq, i) => rows[shardOf(seq, this.shards)].push(i));
    rows.forEach((list, shard) => list.length > 0 && post(shard, list));
  }

  private toEvery(message: Posted): void {
    for (let shard = 0; shard < this.shards; shard++) this.thread(shard).postMessage(message);
  }

  private request(shard: number, make: (id: number) => NearestRequest, transfer: ArrayBuffer[] = []): Promise<NearestResponse> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        shard,
        resolve: (response) => (response.type === 'error' ? reject(new AppError(ErrorCode.INTERNAL, response.message)) : resolve(response)),
        reject,
      });
      try {
        this.thread(shard).postMessage(make(id), transfer);
      } catch (error) {
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  private thread(shard: number): Worker {
    if (this.closed) throw new AppError(ErrorCode.UNAVAILABLE, 'The vector index is closed');
    const running = this.workers[shard];
    if (running) return running;
    const worker = new Worker(this.workerPath, {
      workerData: { shards: this.shards, shard } satisfies NearestWorkerData,
      resourceLimits: { maxYoungGenerationSizeMb: SEARCH_THREAD_YOUNG_GENERATION_MB },
    });
    // An idle search thread never keeps the process alive.
    worker.unref();
    worker.on('message', (response: NearestResponse) => {
      const waiting = this.pending.get(response.id);
      if (!waiting) return;
      this.pending.delete(response.id);
      waiting.resolve(response);
    });
    const lost = (reason: string) => {
      if (this.workers[shard] !== worker) return;
      this.workers[shard] = undefined;
      this.failPending(new AppError(ErrorCode.UNAVAILABLE, `A search thread stopped (${reason})`, { retryable: true }), shard);
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.workers[shard] = worker;
    this.started++;
    return worker;
  }

  /** Fails what the thread (else every thread) was asked and has not answered. */
  private failPending(error: Error, shard?: number): void {
    for (const [id, p] of [...this.pending]) {
      if (shard !== undefined && p.shard !== shard) continue;
      this.pending.delete(id);
      p.reject(error);
    }
  }
}
