import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { BoundedTextSearch } from './bounded-text-search';
import { TextReaderMessage, TextReaderReply } from './text-search-sql';

/**
 * The text reader thread: BM25 searches on a read-only connection of its own to the service's
 * SQLite file. In WAL mode it reads what the main connection has committed without waiting for it,
 * and however long FTS5 takes over a large collection, the service's event loop is not held.
 * Requests are answered in arrival order.
 */
const { file } = workerData as { file: string };
const port = parentPort!;
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
// Reads through SQLite's page cache, not a memory map: a BM25 search over a large collection reads
// much of the FTS index, and mapped pages (up to 1 GiB here) counted in the service's resident
// memory. The store's own connections do not map the file either (mmap_size 0).
db.pragma('mmap_size = 0');
// Prepared at the first search: the tables exist once the index's init() has run.
let search: BoundedTextSearch | undefined;

port.on('message', (message: TextReaderMessage) => {
  let reply: TextReaderReply;
  try {
    search ??= new BoundedTextSearch(db);
    reply = { id: message.id, rows: search.search(message) };
  } catch (error) {
    reply = { id: message.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
