import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FILE_INGEST_JOB } from '../../src/ingestion/ingestion.job';
import { JobQueue } from '../../src/domain/job-queue.port';
import { FileStore } from '../../src/domain/file-store.port';
import { StorageConnections } from '../../src/storage/storage-connections';
import { SEARCH_FIXTURES } from '../fixtures/fixtures';
import { startTestApp, TestApp } from '../utils/test-app';
import { createCollection, FixtureServer, startFixtureServer, waitForFile } from './collections-files.helpers';

/**
 * Work accepted before a restart is done after it: files whose job is still queued, and files
 * the queue lost (a crash between storing the file and queuing it, or during processing).
 */
describe('collections: ingestion across a restart', () => {
  let server: FixtureServer;
  let dataDir: string;
  let t: TestApp | undefined;

  beforeAll(async () => {
    server = await startFixtureServer();
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-restart-'));
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes queued files and re-queues files the queue lost', async () => {
    const env = { DATA_DIR: dataDir, FETCH_ALLOWED_HOSTS: '127.0.0.1' };
    // An API-only process accepts files but runs no job: they stay pending.
    t = await startTestApp({ ...env, APP_ROLE: 'api' });
    const collectionId = await createCollection(t, 'Restarted');
    const ids: string[] = [];
    for (const fixture of SEARCH_FIXTURES.slice(0, 3)) {
      const res = await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
        body: { name: fixture.file, url: `${server.url}/${fixture.file}` },
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const [queued, neverQueued, lostWhileProcessing] = ids;
    const queue = t.app.get(JobQueue);
    expect(await queue.state(FILE_INGEST_JOB, queued)).toBe('waiting');
    const db = t.app.get(StorageConnections).sqlite;
    db.prepare('DELETE FROM jobs WHERE name = ? AND id IN (?, ?)').run(FILE_INGEST_JOB, neverQueued, lostWhileProcessing);
    await t.app.get(FileStore).transition(lostWhileProcessing, ['pending'], 'processing');
    expect(await queue.state(FILE_INGEST_JOB, neverQueued)).toBe('missing');
    await t.close();
    t = undefined;

    t = await startTestApp(env);
    for (const id of ids) {
      expect(await waitForFile(t, collectionId, id)).toMatchObject({ id, status: 'indexed' });
    }
    const fixture = SEARCH_FIXTURES[1];
    const found = await t.request('POST', `/api/v1/collections/${collectionId}/search`, { body: { text: fixture.question, top_k: 1 } });
    expect(found.body.result[0]).toMatchObject({ fileId: neverQueued, fileName: fixture.file });
  });
});
