import { Worker } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../common/app-error';
import { abortError } from '../vectors';
import type { EmbedRequest, WorkerMessage } from './embed-protocol';

export interface EmbedWorkerPoolOptions {
  size: number;
  /** Compiled worker script that speaks `embed-protocol`. */
  workerPath: string;
}

/** One `run()` call; it stays queued until each of its batches has been handed to a worker. */
interface Job {
  batches: string[][];
  results: Float32Array[][];
  nextBatch: number;
  remaining: number;
  settled: boolean;
  resolve(results: Float32Array[][]): void;
  reject(error: Error): void;
}

interface Slot {
  worker?: Worker;
  ready?: Promise<void>;
  /** Rejects `ready` if it is still pending. */
  abandon?: (error: Error) => void;
  /** Message of the uncaught exception that is about to end the worker, if any. */
  crash?: string;
  task?: { id: number; job: Job; batch: number };
}

/**
 * A fixed number of worker threads, each running one model and one batch at a time. A free thread
 * takes the next batch of the job that has had the fewest batches started, so a one-text query
 * waits only for the batches already running, never behind a whole ingestion, and concurrent large
 * jobs alternate. A worker that dies fails only the job whose batch it held and is replaced when
 * work next arrives (not at once: a worker that cannot start must not respawn in a loop).
 */
export class EmbedWorkerPool {
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private nextTaskId = 0;
  private closed = false;

  constructor(private readonly options: EmbedWorkerPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError('Pool size must be a positive integer');
    this.slots = Array.from({ length: options.size }, () => ({}));
  }

  /** Embeds every batch; resolves with one result per batch, in the same order. */
  run(batches: string[][], signal?: AbortSignal): Promise<Float32Array[][]> {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (batches.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const onAbort = () => this.fail(job, abortError(signal!));
      const job: Job = {
        batches,
        results: new Array(batches.length),
        nextBatch: 0,
        remaining: batches.length,
        settled: false,
        resolve: (results) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(results);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Starts every worker and waits until each has loaded its model. */
  async warmUp(): Promise<void> {
    if (this.closed) throw closedError();
    await Promise.all(this.slots.map((slot) => this.spawned(slot).ready));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const job of [...this.queue]) this.fail(job, closedError());
    const workers: Worker[] = [];
    for (const slot of this.slots) {
      if (slot.task) this.fail(slot.task.job, closedError());
      if (slot.worker) workers.push(slot.worker);
      slot.abandon?.(closedError());
      slot.worker = slot.ready = slot.task = slot.abandon = undefined;
    }
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.task) continue;
      if (this.queue.length === 0) return;
      let pick = 0;
      for (let i = 1; i < this.queue.length; i++) if (this.queue[i].nextBatch < this.queue[pick].nextBatch) pick = i;
      const job = this.queue[pick];
      const batch = job.nextBatch++;
      if (job.nextBatch === job.batches.length) this.queue.splice(pick, 1);
      const worker = this.spawned(slot).worker!;
      const id = ++this.nextTaskId;
      slot.task = { id, job, batch };
      worker.ref();
      worker.postMessage({ id, texts: job.batches[batch] } satisfies EmbedRequest);
    }
  }

  private spawned(slot: Slot): Slot {
    if (slot.worker) return slot;
    // A loading or busy worker keeps the process alive; an idle one must not (see dispatch/finish).
    const worker = new Worker(this.options.workerPath);
    const unrefIfIdle = () => {
      if (!slot.task) worker.unref();
    };
    let loaded!: () => void;
    let loadFailed!: (error: Error) => void;
    slot.ready = new Promise<void>((resolve, reject) => {
      loaded = resolve;
      loadFailed = reject;
    });
    // Only warmUp() awaits readiness; a failed load must not surface as an unhandled rejection.
    slot.ready.catch(() => undefined);
    slot.worker = worker;
    slot.abandon = loadFailed;
    slot.crash = undefined;

    worker.on('message', (message: WorkerMessage) => {
      switch (message.type) {
        case 'ready':
          unrefIfIdle();
          return loaded();
        case 'load-failed':
          unrefIfIdle();
          return loadFailed(new AppError(ErrorCode.EMBEDDING_FAILED, `Embedding model failed to load: ${message.error}`));
        case 'embedded':
          return this.finish(slot, message.id, (job, batch) => this.complete(job, batch, message.vectors));
        case 'failed':
          return this.finish(slot, message.id, (job) =>
            this.fail(job, new AppError(ErrorCode.EMBEDDING_FAILED, `Local embedding failed: ${message.error}`)),
          );
      }
    });
    worker.on('error', (error) => {
      slot.crash = error.message;
    });
    worker.on('exit', (code) => {
      if (slot.worker !== worker) return; // terminated by close()
      const reason = slot.crash ?? `exit code ${code}`;
      const error = new AppError(ErrorCode.EMBEDDING_FAILED, `Embedding worker stopped: ${reason}`, { retryable: true });
      const task = slot.task;
      slot.worker = slot.ready = slot.task = slot.abandon = undefined;
      loadFailed(error);
      if (task) this.fail(task.job, error);
      this.dispatch();
    });
    return slot;
  }

  private finish(slot: Slot, id: number, settle: (job: Job, batch: number) => void): void {
    const task = slot.task;
    if (!task || task.id !== id) return;
    slot.task = undefined;
    slot.worker?.unref();
    settle(task.job, task.batch);
    this.dispatch();
  }

  private complete(job: Job, batch: number, vectors: Float32Array[]): void {
    if (job.settled) return;
    // Re-viewed in this realm: typed arrays from a worker fail `instanceof` where code runs in a vm context (jest).
    job.results[batch] = vectors.map((v) => new Float32Array(v.buffer, v.byteOffset, v.length));
    if (--job.remaining > 0) return;
    job.settled = true;
    job.resolve(job.results);
  }

  /** Settles the job with `error` and drops its batches not yet started; started ones finish unseen. */
  private fail(job: Job, error: Error): void {
    if (job.settled) return;
    job.settled = true;
    const queued = this.queue.indexOf(job);
    if (queued >= 0) this.queue.splice(queued, 1);
    job.reject(error);
  }
}

function closedError(): AppError {
  return new AppError(ErrorCode.UNAVAILABLE, 'The local embedder is closed');
}
