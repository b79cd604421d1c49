import { Worker } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../../common/app-error';
import { workerFile } from '../../../common/worker-path';
import type { NearestRequest, NearestResponse, NearestStats } from './nearest-protocol';

/** How long close() waits for the thread to end itself before terminating it (a build step takes well under a second). */
const CLOSE_GRACE_MS = 30_000;

type Pending = { resolve(response: NearestResponse): void; reject(error: Error): void };

/**
 * The main thread's handle on the search thread. Adds, removes and drops are posted without waiting
 * (the thread handles messages in order, so a later search sees them); searches and stats wait for
 * their answer. A thread that dies fails what it held and is started again on the next message;
 * `generation` tells the owner that the new thread holds nothing, so it loads collections again.
 */
export class NearestThread {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  private started = 0;

  constructor(private readonly workerPath = workerFile(__dirname, 'nearest.worker')) {}

  /** Which thread is (now) running: a new value means a new thread that holds nothing yet. */
  get generation(): number {
    this.thread();
    return this.started;
  }

  post(message: Exclude<NearestRequest, { id: number }>, transfer: ArrayBuffer[] = []): void {
    this.thread().postMessage(message, transfer);
  }

  async search(
    collectionId: string,
    query: Float32Array,
    k: number,
    fileIds?: string[],
  ): Promise<{ seqs: Float64Array; distances: Float32Array }> {
    const copy = Float32Array.from(query);
    const response = await this.request((id) => ({ type: 'search', id, collectionId, query: copy, k, fileIds }), [copy.buffer]);
    if (response.type !== 'hits') throw new AppError(ErrorCode.INTERNAL, 'The search thread answered a search with something else');
    return { seqs: response.seqs, distances: response.distances };
  }

  /** Resolves once the thread has handled every message posted before. */
  async sync(): Promise<void> {
    await this.request((id) => ({ type: 'sync', id }));
  }

  async stats(): Promise<NearestStats> {
    const response = await this.request((id) => ({ type: 'stats', id }));
    if (response.type !== 'stats') throw new AppError(ErrorCode.INTERNAL, 'The search thread answered stats with something else');
    return response.stats;
  }

  /**
   * Asks the thread to end itself and waits until it has. Never `terminate()` while it may be in a
   * native scan: usearch's binding then throws a Napi::Error it cannot hand to JavaScript, and
   * `terminate called after throwing an instance of 'Napi::Error'` aborts the whole process (a
   * process.exit() of the main thread does the same; both reproduced). The thread reads the message
   * between two build steps or messages, each bounded; a thread silent for CLOSE_GRACE_MS is
   * terminated anyway.
   */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failPending(new AppError(ErrorCode.UNAVAILABLE, 'The vector index is closed'));
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Held open until the thread has ended: a process that exits meanwhile would terminate it.
    worker.ref();
    worker.postMessage({ type: 'close' } satisfies NearestRequest);
    const grace = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(grace);
  }

  private request(make: (id: number) => NearestRequest, transfer: ArrayBuffer[] = []): Promise<NearestResponse> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        resolve: (response) => (response.type === 'error' ? reject(new AppError(ErrorCode.INTERNAL, response.message)) : resolve(response)),
        reject,
      });
      try {
        this.thread().postMessage(make(id), transfer);
      } catch (error) {
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  private thread(): Worker {
    if (this.closed) throw new AppError(ErrorCode.UNAVAILABLE, 'The vector index is closed');
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerPath);
    // An idle search thread never keeps the process alive.
    worker.unref();
    worker.on('message', (response: NearestResponse) => {
      const waiting = this.pending.get(response.id);
      if (!waiting) return;
      this.pending.delete(response.id);
      waiting.resolve(response);
    });
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failPending(new AppError(ErrorCode.UNAVAILABLE, `The search thread stopped (${reason})`, { retryable: true }));
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.worker = worker;
    this.started++;
    return worker;
  }

  private failPending(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(error);
  }
}
