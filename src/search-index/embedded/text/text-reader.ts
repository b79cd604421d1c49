import { Worker } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../../common/app-error';
import { workerFile } from '../../../common/worker-path';
import type { TextReaderReply, TextSearchRequest, TextSearchRow } from './text-search-sql';

type Pending = { resolve(rows: TextSearchRow[]): void; reject(error: Error): void };

/**
 * The main thread's handle on the text reader thread (text-reader.worker.ts), which runs BM25
 * searches on its own read-only connection to `file`. Started on the first search; a thread that
 * dies fails the searches it held and is started again by the next one.
 */
export class TextReader {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  /** @param file the database file the main connection writes (WAL mode). */
  constructor(
    private readonly file: string,
    private readonly workerPath = workerFile(__dirname, 'text-reader.worker'),
  ) {}

  search(request: TextSearchRequest): Promise<TextSearchRow[]> {
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
    const worker = new Worker(this.workerPath, { workerData: { file: this.file } });
    // An idle reader never keeps the process alive.
    worker.unref();
    worker.on('message', (reply: TextReaderReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if ('error' in reply) waiting.reject(new AppError(ErrorCode.INTERNAL, `Keyword search failed: ${reply.error}`));
      else waiting.resolve(reply.rows);
    });
    const lost = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failPending(new AppError(ErrorCode.UNAVAILABLE, `The text reader thread stopped (${reason})`, { retryable: true }));
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
