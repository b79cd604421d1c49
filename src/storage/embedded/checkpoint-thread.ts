import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { workerFile } from '../../common/worker-path';
import type { SqliteDb } from './sqlite-database';

/**
 * The writing connection's own threshold once the thread checkpoints for it, in pages (40 MB): a
 * backstop that bounds the WAL if the thread falls behind or stops. SQLite's default is 1,000.
 */
export const CHECKPOINT_BACKSTOP_PAGES = 10_000;
/** How often the thread looks for commits to copy into the file. */
const LOOK_EVERY_MS = 100;

export interface CheckpointThreadData {
  file: string;
  everyMs: number;
}

/**
 * WAL checkpoints in a thread of their own, for a connection that writes in bulk (ingestion's
 * passages, vectors and FTS rows). SQLite checkpoints in the commit that finds the WAL past
 * `wal_autocheckpoint` pages: it copies the WAL's pages into the file and syncs both, on the event
 * loop of whoever committed. Ingesting 20,000 passages (60,000 vectors, about 300 MB written), those
 * checkpoints held the writing event loop for more than half of its time (6-8.5 s of wall time
 * against 2.2-2.5 s with none, load 5), waits on the disk more than CPU. With the thread, the
 * connection's own threshold is raised to CHECKPOINT_BACKSTOP_PAGES and the thread copies what was
 * committed every LOOK_EVERY_MS; the WAL restarts from its beginning when a checkpoint has caught
 * up with the writer, as before.
 *
 * One per connection (`checkpointThreadOf`), started by its first bulk writer; unref'd, so it never
 * keeps the process alive; a thread that dies leaves the backstop to checkpoint. Not for a
 * database in memory (no WAL, and no other connection can open it).
 */
export class CheckpointThread {
  private worker?: Worker;
  /** Told each time the thread has checkpointed (for tests). */
  readonly events = new EventEmitter();

  constructor(private readonly db: SqliteDb) {
    db.pragma(`wal_autocheckpoint = ${Math.max(CHECKPOINT_BACKSTOP_PAGES, db.pragma('wal_autocheckpoint', { simple: true }) as number)}`);
    const data: CheckpointThreadData = { file: db.name, everyMs: LOOK_EVERY_MS };
    const worker = new Worker(workerFile(__dirname, 'checkpoint-thread.worker'), { workerData: data });
    worker.unref();
    worker.on('message', () => this.events.emit('checkpointed'));
    // A thread that fails leaves checkpoints to the backstop; nothing is lost, the WAL holds it all.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
    });
    this.worker = worker;
  }

  /** Stops the thread (its connection closed first); the writer's backstop threshold stays. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    threads.delete(this.db);
    if (!worker) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    // Held while it closes: an unref'd thread would let a process with nothing else to do exit in
    // the middle of this await, before its shutdown finished (its last lines and output unwritten).
    worker.ref();
    worker.postMessage('close');
    await exited;
  }
}

const threads = new WeakMap<SqliteDb, CheckpointThread>();

/** The connection's checkpoint thread, started on first call; undefined for a database in memory. */
export function checkpointThreadOf(db: SqliteDb): CheckpointThread | undefined {
  if (db.memory || !db.open) return undefined;
  let thread = threads.get(db);
  if (!thread) {
    thread = new CheckpointThread(db);
    threads.set(db, thread);
  }
  return thread;
}
