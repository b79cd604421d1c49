import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { SEARCH_TEXT_IN_FILES_SQL, SEARCH_TEXT_SQL, TextReaderMessage, TextReaderReply } from './text-search-sql';

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
let statements: { any: Database.Statement; inFiles: Database.Statement } | undefined;

port.on('message', (message: TextReaderMessage) => {
  let reply: TextReaderReply;
  try {
    statements ??= { any: db.prepare(SEARCH_TEXT_SQL), inFiles: db.prepare(SEARCH_TEXT_IN_FILES_SQL) };
    const { query, collectionId, after, fileIds, k } = message;
    const rows =
      fileIds === undefined
        ? statements.any.all(query, collectionId, after, k)
        : statements.inFiles.all(query, collectionId, after, fileIds, k);
    reply = { id: message.id, rows: rows as never };
  } catch (error) {
    reply = { id: message.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
