import type Database from 'better-sqlite3';
import { rerankByFloats, RerankRequest, UNITS_BY_SEQ_SQL } from './float-rerank';
import { answerRequests, readerConnection } from './reader-thread.port';

/**
 * The re-rank thread: a vector search's candidates ranked by their float vectors, read on a
 * read-only connection of its own (see float-rerank.ts). Requests are answered in arrival order.
 */
const db = readerConnection();
// Prepared at the first request: the tables exist once the index's init() has run.
let select: Database.Statement | undefined;

answerRequests((request: RerankRequest) => {
  select ??= db.prepare(UNITS_BY_SEQ_SQL);
  return rerankByFloats(select, request);
});
