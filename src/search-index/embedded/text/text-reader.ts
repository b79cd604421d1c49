import { workerFile } from '../../../common/worker-path';
import { ReaderThread } from '../reader-thread';
import type { TextSearchRequest, TextSearchRow } from './text-search-sql';

/**
 * The text reader thread (text-reader.worker.ts), which runs BM25 searches on its own read-only
 * connection to `file`.
 */
export class TextReader extends ReaderThread<TextSearchRequest, TextSearchRow[]> {
  /** @param file the database file the main connection writes (WAL mode). */
  constructor(file: string, workerPath = workerFile(__dirname, 'text-reader.worker')) {
    super(file, workerPath, { request: 'Keyword search', thread: 'text reader thread' });
  }

  search(request: TextSearchRequest): Promise<TextSearchRow[]> {
    return this.ask(request);
  }
}
