import { Worker } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../common/app-error';
import { workerFile } from '../../common/worker-path';
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

/** Message to a worker: one job, the file's bytes transferred, not copied. */
export interface ExtractRequest {
  bytes: ArrayBuffer;
  type: DetectedType;
  options: ExtractOptions;
}

export type ExtractResponse =
  | { ok: true; document: ExtractedDocument }
  | { ok: false; error: { code: ErrorCode; message: string; details?: unknown } };

export interface ExtractJobOptions {
  /** This job's limit instead of the pool's `timeoutMs` (e.g. scaled to the file's size). */
  timeoutMs?: number;
  /** Cancels the job: a queued job is dropped, a running one has its worker terminated. Rejects with CANCELED. */
  signal?: AbortSignal;
}

interface Job {
  bytes: ArrayBuffer;
  type: DetectedType;
  timeoutMs: number;
  resolve: (document: ExtractedDocument) => void;
  reject: (error: AppError) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

/**
 * Runs document extraction in worker threads so that parsing never blocks the event loop. A job
 * that outlives `timeoutMs` fails with TIMEOUT and its worker is terminated and replaced; a
 * worker that crashes (uncaught error, out of memory) fails its job with EXTRACTION_FAILED.
 * Either way the pool keeps serving.
 */
export class ExtractorPool {
  private readonly script: string;
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: Job[] = [];
  private closed = false;

  constructor(private readonly opts: ExtractorPoolOptions) {
    if (!(opts.threads >= 1)) throw new Error('ExtractorPool needs at least one thread');
    if (!(opts.timeoutMs > 0)) throw new Error('ExtractorPool needs a positive timeoutMs');
    this.script = opts.workerScript ?? workerFile(__dirname, 'extract.worker');
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
      const onAbort = () => this.cancel(job);
      const settled = () => signal?.removeEventListener('abort', onAbort);
      const job: Job = {
        bytes: ownArrayBuffer(bytes),
        type,
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
    const exits: Promise<number>[] = [];
    for (const slot of [...this.slots]) {
      this.finish(slot, closedError());
      exits.push(this.retire(slot));
    }
    await Promise.all(exits);
  }

  private cancel(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      job.reject(canceledError());
      return;
    }
    for (const slot of this.slots) {
      if (slot.job !== job) continue;
      this.finish(slot, canceledError());
      void this.retire(slot);
      this.dispatch();
      return;
    }
  }

  private dispatch(): void {
    while (this.queue.length && !this.closed) {
      const slot = this.idle.pop() ?? (this.slots.size < this.opts.threads ? this.spawn() : undefined);
      if (!slot) return;
      this.run(slot, this.queue.shift()!);
    }
  }

  private run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.timer = setTimeout(() => {
      this.finish(slot, new AppError(ErrorCode.TIMEOUT, `extraction timed out after ${job.timeoutMs} ms`));
      void this.retire(slot);
      this.dispatch();
    }, job.timeoutMs);
    const request: ExtractRequest = {
      bytes: job.bytes,
      type: job.type,
      options: { maxDecompressedBytes: this.opts.maxDecompressedBytes },
    };
    slot.worker.postMessage(request, [job.bytes]);
  }

  private spawn(): Slot {
    const worker = new Worker(this.script);
    const slot: Slot = { worker };
    this.slots.add(slot);
    worker.on('message', (response: ExtractResponse) => {
      const job = slot.job;
      if (!job) return;
      this.finish(slot);
      if (response.ok) job.resolve(response.document);
      else job.reject(new AppError(response.error.code, response.error.message, { details: response.error.details }));
      this.idle.push(slot);
      this.dispatch();
    });
    worker.on('error', (error) => {
      this.finish(slot, new AppError(ErrorCode.EXTRACTION_FAILED, `extraction worker crashed: ${error.message}`, { cause: error }));
      void this.retire(slot);
      this.dispatch();
    });
    worker.on('exit', (code) => {
      this.finish(slot, new AppError(ErrorCode.EXTRACTION_FAILED, `extraction worker exited with code ${code}`));
      this.forget(slot);
      this.dispatch();
    });
    // An idle worker must not keep the process alive.
    worker.unref();
    return slot;
  }

  /** Ends the slot's current job, rejecting it with `error` when given; resolving is the caller's. */
  private finish(slot: Slot, error?: AppError): void {
    clearTimeout(slot.timer);
    slot.timer = undefined;
    const job = slot.job;
    slot.job = undefined;
    if (job && error) job.reject(error);
  }

  private retire(slot: Slot): Promise<number> {
    this.forget(slot);
    return slot.worker.terminate();
  }

  private forget(slot: Slot): void {
    this.slots.delete(slot);
    const at = this.idle.indexOf(slot);
    if (at !== -1) this.idle.splice(at, 1);
  }
}

/** Transferring a Buffer's ArrayBuffer is only safe when the Buffer owns all of it. */
function ownArrayBuffer(bytes: Buffer): ArrayBuffer {
  const buffer = bytes.buffer;
  if (buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return buffer;
  return new Uint8Array(bytes).buffer as ArrayBuffer;
}

function canceledError(): AppError {
  return new AppError(ErrorCode.CANCELED, 'extraction canceled');
}

function closedError(): AppError {
  return new AppError(ErrorCode.UNAVAILABLE, 'extractor pool is closed');
}
