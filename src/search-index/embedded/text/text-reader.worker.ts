import { answerRequests, readerConnection } from '../reader-thread.port';
import { BoundedTextSearch } from './bounded-text-search';
import { TextSearchRequest } from './text-search-sql';

/**
 * The text reader thread: BM25 searches on a read-only connection of its own to the service's
 * SQLite file, so however long FTS5 takes over a large collection, the service's event loop is not
 * held. Requests are answered in arrival order.
 */
const db = readerConnection();
// Prepared at the first search: the tables exist once the index's init() has run.
let search: BoundedTextSearch | undefined;

answerRequests((request: TextSearchRequest) => {
  search ??= new BoundedTextSearch(db);
  return search.search(request);
});
