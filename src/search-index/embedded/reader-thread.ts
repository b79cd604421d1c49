import { Worker } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../common/app-error';

/** What a reader thread answers a request with (see answerRequests). */
export type ReaderReply<Result> = { id: number; result: Result } | { id: number; error: string };

/**
 * A reader thread's young generation, in MiB. Its requests allocate rows and buffers that live for
 * one request; with V8's default young generation a thread answering re-ranks (56 rows of 2 KiB
 * vectors each) held 71-88 MiB of anonymous memory, with 4 MiB 25-34 MiB, for the same CPU.
 */
const YOUNG_GENERATION_MB = 4;

type Pending<Result> = { resolve(result: Result): void; reject(error: Error): void };

/**
 * The main thread's handle on a reader thread: a worker on a read-only connection of its own to
 * the store's `file` (reader-thread.port.ts), answering requests in arrival order, so the reads it
 * does never hold the service's event loop. Started on the first request; a thread that dies fails
 * the requests it held and is started again by the next one.
 */
export class ReaderThread<Request extends object, Result> {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending<Result>>();
  private nextId = 1;
  private closed = false;

  /**
   * @param file the database file the main connection writes (WAL mode)
   * @param names what fails when a request fails (`Keyword search`), and the thread's name
   */
  constructor(
    private readonly file: string,
    private readonly workerPath: string,
    private readonly names: { request: string; thread: string },
  ) {}

  ask(request: Request): Promise<Result> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.thread().postMessage({ ...request, id });
      } catch (error) {
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failPending(new AppError(ErrorCode.UNAVAILABLE, 'The vector index is closed'));
    await worker?.terminate();
  }

  private thread(): Worker {
    if (this.closed) throw new AppError(ErrorCode.UNAVAILABLE, 'The vector index is closed');
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerPath, {
      workerData: { file: this.file },
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    // An idle reader never keeps the process alive.
    worker.unref();
    worker.on('message', (reply: ReaderReply<Result>) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if ('error' in reply) waiting.reject(new AppError(ErrorCode.INTERNAL, `${this.names.request} failed: ${reply.error}`));
      else waiting.resolve(reply.result);
    });
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failPending(new AppError(ErrorCode.UNAVAILABLE, `The ${this.names.thread} stopped (${reason})`, { retryable: true }));
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  private failPending(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(error);
  }
}
