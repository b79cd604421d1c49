import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { RecordingQueue } from '../../test/utils/recording-queue';
import { newId } from '../common/ids';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteCollectionStore } from '../storage/embedded/sqlite-collection-store.adapter';
import { SqliteFileStore } from '../storage/embedded/sqlite-file-store.adapter';
import { newPendingFile, StoredFile } from '../domain/file.model';
import { FilesReconciler } from './files-reconciler.service';
import { FILE_INGEST_JOB, FILE_INGEST_LARGE_JOB } from './ingestion.job';

describe('FilesReconciler', () => {
  let dir: string;
  let db: SqliteDb;
  let files: SqliteFileStore;
  let queue: RecordingQueue;
  let collectionId: string;
  const longAgo = new Date(Date.now() - 10 * 60_000);

  const reconciler = (batchSize = 100) => new FilesReconciler(files, queue, pino({ level: 'silent' }), { intervalMs: 60_000, batchSize });

  const stored = async (at = longAgo, status: StoredFile['status'] = 'pending'): Promise<StoredFile> => {
    const file = { ...newPendingFile(collectionId, 'a.txt', { url: 'https://example.com/a.txt' }, 'text/plain', at), status };
    await files.create(file);
    return file;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-files-reconciler-'));
    db = openSqliteDatabase(dir);
    files = new SqliteFileStore(db);
    queue = new RecordingQueue();
    collectionId = newId('col');
    const now = new Date();
    await new SqliteCollectionStore(db).create({
      id: collectionId,
      name: 'c',
      ownerId: 'usr_x',
      createdAt: now,
      updatedAt: now,
      embeddingModel: null,
      embeddingDimension: null,
    });
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('queues an unfinished file that has no job, under its own id, once', async () => {
    const lost = await stored();
    const pass = reconciler();
    await pass.reconcile();
    expect(queue.enqueued).toEqual([{ name: FILE_INGEST_JOB, data: { collectionId, fileId: lost.id }, jobId: lost.id }]);
    await pass.reconcile();
    expect(queue.enqueued).toHaveLength(1);
  });

  it('leaves files whose job is alive, and finished files', async () => {
    const waiting = await stored();
    queue.states.set(waiting.id, 'active');
    await stored(longAgo, 'indexed');
    await stored(longAgo, 'error');
    await reconciler().reconcile();
    expect(queue.enqueued).toEqual([]);
  });

  it('gives a file whose job ended without finishing it a new job id', async () => {
    const stuck = await stored(longAgo, 'processing');
    queue.states.set(stuck.id, 'completed');
    await reconciler().reconcile();
    expect(queue.enqueued[0].jobId).toMatch(new RegExp(`^${stuck.id}-`));
  });

  it('queues a file again in its own lane, and leaves one whose job waits in the other lane', async () => {
    const large = await stored();
    await files.update(large.id, { lane: 'large', error: 'The disk holding /data/blobs is full' });
    await reconciler().reconcile();
    expect(queue.enqueued).toEqual([{ name: FILE_INGEST_LARGE_JOB, data: { collectionId, fileId: large.id }, jobId: large.id }]);
    await reconciler().reconcile();
    expect(queue.enqueued).toHaveLength(1);
  });

  it('covers a backlog larger than a batch over successive passes', async () => {
    const backlog = [];
    for (let i = 0; i < 5; i++) backlog.push(await stored());
    const pass = reconciler(2);
    for (let i = 0; i < 3; i++) await pass.reconcile();
    expect(queue.enqueued.map((e) => e.jobId).sort()).toEqual(backlog.map((f) => f.id).sort());
  });
});
