import { MessageChannel, MessagePort } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../common/app-error';
import { workerFile } from '../../common/worker-path';
import { messageOf, WorkerThreadPool, WorkerThreadStopped } from '../../common/worker-thread-pool';
import { DetectedType } from '../detect-type';
import { ExtractedDocument, ExtractOptions } from './extracted-document';

export interface ExtractorPoolOptions {
  /** Worker threads; jobs beyond this wait in order. */
  threads: number;
  /** Per-job limit; on expiry the worker is terminated (a parser stuck in a loop cannot be interrupted otherwise). */
  timeoutMs: number;
  /** Cap on the bytes an OOXML archive may inflate to; default 200 MB. */
  maxDecompressedBytes?: number;
  /** The script each worker runs; default the compiled extract.worker. For tests that need a misbehaving worker. */
  workerScript?: string;
}

/** A task for a worker thread: one job, the file's bytes transferred, not copied. */
export interface ExtractRequest {
  bytes: ArrayBuffer;
  type: DetectedType;
  options: Omit<ExtractOptions, 'onPages'>;
  /** Where the worker posts `{done, total}` pages as it reads a PDF, when the caller wants to know. */
  pages?: MessagePort;
}

export type ExtractResponse =
  { ok: true; document: ExtractedDocument } | { ok: false; error: { code: ErrorCode; message: string; details?: unknown } };

export interface ExtractJobOptions {
  /** This job's limit instead of the pool's `timeoutMs` (e.g. scaled to the file's size). */
  timeoutMs?: number;
  /** Cancels the job: a queued job is dropped, a running one has its worker terminated. Rejects with CANCELED. */
  signal?: AbortSignal;
  /** See ExtractOptions.maxPages. */
  maxPages?: number;
  /** Pages read so far, of how many, while a PDF is read. */
  onPages?: (done: number, total: number) => void;
}

interface Job {
  bytes: ArrayBuffer;
  type: DetectedType;
  maxPages?: number;
  onPages?: (done: number, total: number) => void;
  timeoutMs: number;
  resolve: (document: ExtractedDocument) => void;
  reject: (error: AppError) => void;
  /** Set while the job runs: ends its task, terminating the thread. */
  stop?: AbortController;
  timer?: NodeJS.Timeout;
}

/**
 * Runs document extraction in worker threads (piscina) so that parsing never blocks the event loop.
 * A job that outlives `timeoutMs` fails with TIMEOUT and its thread is terminated and replaced; a
 * thread that crashes (uncaught error, out of memory) fails its job with EXTRACTION_FAILED.
 * Either way the pool keeps serving. Jobs wait here rather than in piscina's queue so that a
 * job's time starts when a thread takes it, not while it waits behind others.
 */
export class ExtractorPool {
  private readonly threads: WorkerThreadPool;
  private readonly queue: Job[] = [];
  private readonly running = new Set<Job>();
  private closed = false;

  constructor(private readonly opts: ExtractorPoolOptions) {
    if (!(opts.threads >= 1)) throw new Error('ExtractorPool needs at least one thread');
    if (!(opts.timeoutMs > 0)) throw new Error('ExtractorPool needs a positive timeoutMs');
    this.threads = new WorkerThreadPool({
      filename: opts.workerScript ?? workerFile(__dirname, 'extract.worker'),
      threads: opts.threads,
    });
  }

  /**
   * Extracts the text of `bytes`. The bytes' memory is transferred to the worker: afterwards
   * `bytes` is empty (a Buffer sharing Node's small-buffer pool is copied first instead).
   */
  extract(bytes: Buffer, type: DetectedType, options: ExtractJobOptions = {}): Promise<ExtractedDocument> {
    if (this.closed) return Promise.reject(closedError());
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(canceledError());
    const timeoutMs = options.timeoutMs ?? this.opts.timeoutMs;
    return new Promise<ExtractedDocument>((resolve, reject) => {
      const onAbort = () => this.end(job, canceledError());
      const settled = () => signal?.removeEventListener('abort', onAbort);
      const job: Job = {
        bytes: ownArrayBuffer(bytes),
        type,
        maxPages: options.maxPages,
        onPages: options.onPages,
        timeoutMs,
        resolve: (document) => {
          settled();
          resolve(document);
        },
        reject: (error) => {
          settled();
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(closedError());
    for (const job of [...this.running]) this.settle(job, closedError());
    await this.threads.destroy();
  }

  private dispatch(): void {
    while (this.queue.length && this.running.size < this.opts.threads && !this.closed) this.run(this.queue.shift()!);
  }

  private run(job: Job): void {
    const stop = new AbortController();
    job.stop = stop;
    this.running.add(job);
    job.timer = setTimeout(
      () => this.end(job, new AppError(ErrorCode.TIMEOUT, `extraction timed out after ${job.timeoutMs} ms`)),
      job.timeoutMs,
    );
    const channel = job.onPages ? new MessageChannel() : undefined;
    if (channel) {
      const onPages = job.onPages!;
      channel.port1.on('message', (message: { done: number; total: number }) => onPages(message.done, message.total));
      // Never what keeps the process alive; the worker closes the channel when done (or dies with it),
      // after its last count, which may arrive after the result.
      channel.port1.unref();
    }
    const request: ExtractRequest = {
      bytes: job.bytes,
      type: job.type,
      options: { maxDecompressedBytes: this.opts.maxDecompressedBytes, maxPages: job.maxPages },
      pages: channel?.port2,
    };
    const transferList = channel ? [job.bytes, channel.port2] : [job.bytes];
    this.threads.run<ExtractResponse>(request, { transferList, signal: stop.signal }).then(
      (response) => {
        if (!this.settle(job)) return;
        if (response.ok) job.resolve(response.document);
        else job.reject(new AppError(response.error.code, response.error.message, { details: response.error.details }));
        this.dispatch();
      },
      (error: unknown) => {
        if (!this.settle(job, threadError(error))) return;
        this.dispatch();
      },
    );
  }

  /** Fails a job that is queued or running; a running one has its thread terminated first. */
  private end(job: Job, error: AppError): void {
    const queued = this.queue.indexOf(job);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      job.reject(error);
      return;
    }
    const stop = job.stop;
    if (!this.settle(job, error)) return;
    // Aborted before the next job is handed over, so that piscina replaces the thread for it.
    stop?.abort(error);
    this.dispatch();
  }

  /** Takes a running job out of the pool, rejecting it with `error` if given; false if it had already left. */
  private settle(job: Job, error?: AppError): boolean {
    if (!this.running.delete(job)) return false;
    clearTimeout(job.timer);
    job.stop = job.timer = undefined;
    if (error) job.reject(error);
    return true;
  }
}

function threadError(error: unknown): AppError {
  if (error instanceof WorkerThreadStopped && error.exitCode !== undefined) {
    return new AppError(ErrorCode.EXTRACTION_FAILED, `extraction worker exited with code ${error.exitCode}`);
  }
  return new AppError(ErrorCode.EXTRACTION_FAILED, `extraction worker crashed: ${messageOf(error)}`, { cause: error });
}

/**
 * Transferring a Buffer's ArrayBuffer is only safe when the Buffer owns all of it. It is moved
 * (not copied) at once, so the caller's Buffer is empty from the call on, not from whenever a
 * thread takes the job.
 */
function ownArrayBuffer(bytes: Buffer): ArrayBuffer {
  const buffer = bytes.buffer;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) {
    return structuredClone(buffer, { transfer: [buffer] });
  }
  return new Uint8Array(bytes).buffer as ArrayBuffer;
}

function canceledError(): AppError {
  return new AppError(ErrorCode.CANCELED, 'extraction canceled');
}

function closedError(): AppError {
  return new AppError(ErrorCode.UNAVAILABLE, 'extractor pool is closed');
}
