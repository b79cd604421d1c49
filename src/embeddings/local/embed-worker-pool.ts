import { AppError, ErrorCode } from '../../common/app-error';
import { messageOf, WorkerThreadPool } from '../../common/worker-thread-pool';
import { abortError } from '../vectors';
import type { EmbedRequest, EmbedResponse } from './embed-protocol';

export interface EmbedWorkerPoolOptions {
  size: number;
  /** Compiled worker module that speaks `embed-protocol`. */
  workerPath: string;
}

/** One `run()` call; it stays queued until each of its batches has been handed to a thread. */
interface Job {
  batches: string[][];
  results: Float32Array[][];
  nextBatch: number;
  remaining: number;
  settled: boolean;
  resolve(results: Float32Array[][]): void;
  reject(error: Error): void;
}

const START_THREAD: EmbedRequest = { texts: [] };

/**
 * A fixed number of worker threads (piscina), each running one model and one batch at a time. A
 * free thread takes the next batch of the job that has had the fewest batches started, so a
 * one-text query waits only for the batches already running, never behind a whole ingestion, and
 * concurrent large jobs alternate. That choice is made here, batch by batch, which is why batches
 * are handed to piscina only when a thread is free. A thread that dies fails only the job whose
 * batch it held and is replaced when work next arrives.
 */
export class EmbedWorkerPool {
  private readonly threads: WorkerThreadPool;
  private readonly queue: Job[] = [];
  /** The job of each batch being embedded. */
  private readonly running = new Set<{ job: Job }>();
  private closed = false;

  constructor(private readonly options: EmbedWorkerPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) throw new RangeError('Pool size must be a positive integer');
    this.threads = new WorkerThreadPool({ filename: options.workerPath, threads: options.size });
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

  /** Starts every thread and waits until each has loaded its model. */
  async warmUp(): Promise<void> {
    if (this.closed) throw closedError();
    try {
      await this.threads.startThreads(START_THREAD);
    } catch (error) {
      throw this.closed ? closedError() : new AppError(ErrorCode.EMBEDDING_FAILED, `Embedding model failed to load: ${messageOf(error)}`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const job of [...this.queue]) this.fail(job, closedError());
    for (const { job } of this.running) this.fail(job, closedError());
    await this.threads.destroy();
  }

  private dispatch(): void {
    while (!this.closed && this.running.size < this.options.size && this.queue.length > 0) {
      let pick = 0;
      for (let i = 1; i < this.queue.length; i++) if (this.queue[i].nextBatch < this.queue[pick].nextBatch) pick = i;
      const job = this.queue[pick];
      const batch = job.nextBatch++;
      if (job.nextBatch === job.batches.length) this.queue.splice(pick, 1);
      const task = { job };
      this.running.add(task);
      void this.threads
        .run<EmbedResponse>({ texts: job.batches[batch] } satisfies EmbedRequest)
        .then(
          (response) => {
            if ('vectors' in response) this.complete(job, batch, response.vectors);
            else this.fail(job, new AppError(ErrorCode.EMBEDDING_FAILED, `Local embedding failed: ${response.error}`));
          },
          (error: unknown) => {
            const reason = messageOf(error);
            this.fail(job, new AppError(ErrorCode.EMBEDDING_FAILED, `Embedding worker stopped: ${reason}`, { retryable: true }));
          },
        )
        .finally(() => {
          this.running.delete(task);
          this.dispatch();
        });
    }
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
