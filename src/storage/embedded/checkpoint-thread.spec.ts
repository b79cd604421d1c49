import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CHECKPOINT_BACKSTOP_PAGES, checkpointThreadOf } from './checkpoint-thread';

describe('checkpointThreadOf', () => {
  let dir: string;
  let db: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-checkpoint-'));
    db = new Database(join(dir, 'service.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)');
  });

  afterEach(async () => {
    await checkpointThreadOf(db)?.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("copies a writer's commits into the file from its own thread, the writer's own threshold raised to the backstop", async () => {
    const thread = checkpointThreadOf(db)!;
    expect(checkpointThreadOf(db)).toBe(thread);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(CHECKPOINT_BACKSTOP_PAGES);
    const fileBytes = () => statSync(join(dir, 'service.db')).size;
    // 2,000 pages: past SQLite's own threshold (1,000), below the backstop, so the writer never checkpoints.
    // (The file's size is not compared right after the commit: the thread looks on its own timer and
    // may copy the schema's page, or these, at any moment; under load it did, between two reads.)
    const insert = db.prepare('INSERT INTO blobs (data) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run(Buffer.alloc(3_000, i % 251));
    })();
    // Each checkpoint the thread reports; the pages are in the file once one has caught up.
    while (fileBytes() < 2_000 * 3_000) await new Promise((resolve) => thread.events.once('checkpointed', resolve));
    expect(db.prepare('SELECT count(*) FROM blobs').pluck().get()).toBe(2_000);
  });

  it('keeps a process that has nothing else to do alive until the thread has closed', () => {
    // The thread is unref'd; awaiting its close in such a process (the CLI, a worker's shutdown)
    // once let the process exit mid-await, its output unwritten.
    const compiled = resolve(__dirname, '../../../dist/src/storage/embedded/checkpoint-thread.js');
    const script = `
      const Database = require('better-sqlite3');
      const { checkpointThreadOf } = require(${JSON.stringify(compiled)});
      const db = new Database(process.argv[1]);
      db.pragma('journal_mode = WAL');
      checkpointThreadOf(db).close().then(() => { db.close(); process.stdout.write('closed'); });
    `;
    const out = execFileSync(process.execPath, ['-e', script, join(dir, 'alone.db')], { cwd: resolve(__dirname, '../../..') });
    expect(out.toString()).toBe('closed');
  });

  it('leaves a database in memory alone', () => {
    const memory = new Database(':memory:');
    expect(checkpointThreadOf(memory)).toBeUndefined();
    memory.close();
  });
});
