import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckpointThreadData } from './checkpoint-thread';

/**
 * The checkpoint thread (checkpoint-thread.ts): on a connection of its own, every `everyMs` it
 * looks whether another connection committed since it last looked (`PRAGMA data_version`, which
 * reads no table and takes no lock) and, if so, copies the WAL's committed pages into the file
 * (a PASSIVE checkpoint: it never waits for a lock nor blocks a writer, and does what it can).
 */
const { file, everyMs } = workerData as CheckpointThreadData;
const port = parentPort!;
const db = new Database(file, { fileMustExist: true });
db.pragma('mmap_size = 0');
const dataVersion = db.prepare('PRAGMA data_version').pluck();
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
/** What data_version said at the last look; none at first, so the first look checkpoints what came before the thread. */
let seen: unknown;
let timer: NodeJS.Timeout | undefined;

const look = (): void => {
  try {
    const now = dataVersion.get();
    if (now !== seen) {
      seen = now;
      checkpoint.get();
      port.postMessage('checkpointed');
    }
  } catch {
    // A failed checkpoint leaves the pages in the WAL for the next one (or the writer's backstop).
  }
  timer = setTimeout(look, everyMs);
};
timer = setTimeout(look, everyMs);

port.on('message', (message: string) => {
  if (message !== 'close') return;
  clearTimeout(timer);
  db.close();
  port.close();
});
