// The thread's side of a ReaderThread (reader-thread.ts): its connection and its answers.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { ReaderReply } from './reader-thread';

/**
 * The reader thread's read-only connection to the service's SQLite file. In WAL mode it reads what
 * the main connection has committed without waiting for it. Reads go through SQLite's page cache,
 * not a memory map: a BM25 search over a large collection reads much of the FTS index, and mapped
 * pages (up to 1 GiB here) counted in the service's resident memory. The store's own connections do
 * not map the file either (mmap_size 0).
 */
export function readerConnection(): Database.Database {
  const { file } = workerData as { file: string };
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('mmap_size = 0');
  return db;
}

/** Answers each request, in arrival order, with what `handle` returns or the message of what it threw. */
export function answerRequests<Request>(handle: (request: Request) => unknown): void {
  const port = parentPort!;
  port.on('message', (message: Request & { id: number }) => {
    let reply: ReaderReply<unknown>;
    try {
      reply = { id: message.id, result: handle(message) };
    } catch (error) {
      reply = { id: message.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply);
  });
}
