import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath, REJECTED_FIXTURES } from '../fixtures/fixtures';
import { makeLargeTextPdf } from '../fixtures/pdf-builder';
import { bothQueues } from '../utils/queues';
import { startTestApp, TestApp } from '../utils/test-app';
import { addNotes, createCollection, upload, waitForFile } from './collections-files.helpers';

/** Polls the file until `accept` holds for it; fails with the last record seen. */
async function waitUntil(
  t: TestApp,
  collectionId: string,
  fileId: string,
  what: string,
  accept: (file: any) => boolean,
  timeoutMs = 90_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = (await t.request('GET', `/api/v1/collections/${collectionId}/files/${fileId}`)).body;
    if (accept(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`file ${fileId} never ${what}; last: ${JSON.stringify(last)}`);
}

/**
 * A large file (many pages, or many bytes) is ingested in a lane of its own: it never holds the
 * small files added after it, nor a zip bomb's refusal. Proved without timing: this process runs
 * no large-file worker (INGEST_LARGE_CONCURRENCY=0), so while the large files wait there, every
 * small file must still end; a restart with a large-file worker then indexes them.
 */
describe.each(bothQueues('ingestion-lanes'))('ingestion lanes on $name', (setup) => {
  let dataDir: string;
  let t: TestApp | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-lanes-'));
  });
  afterAll(async () => {
    await t?.close();
    await setup.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Large files are extracted and embedded on their own lane: minutes on a machine at load 18.
  it('keeps large files out of the way of small ones, reporting lane and progress, and ingests them in their lane', async () => {
    const env = { ...(await setup.env()), DATA_DIR: dataDir, INGEST_LARGE_PAGES: '3', INGEST_LARGE_BYTES: '100000' };
    t = await startTestApp({ ...env, INGEST_LARGE_CONCURRENCY: '0' });
    const collectionId = await createCollection(t, 'Lanes');

    // Many pages but few bytes: the standard lane finds the page count in the PDF's page tree.
    const longPdf = await upload(t, collectionId, 'long.pdf', makeLargeTextPdf(6), 'application/pdf');
    expect(longPdf.status).toBe(201);
    expect(longPdf.body).toMatchObject({ status: 'pending', lane: 'standard', progress: { stage: 'queued', done: 0, total: 0 } });
    // Many bytes: known at upload, queued in the large lane at once.
    const bigText = Buffer.from('Large lanes keep big files apart. '.repeat(3300));
    const big = await upload(t, collectionId, 'big.txt', bigText, 'text/plain');
    expect(big.status).toBe(201);
    expect(big.body).toMatchObject({ status: 'pending', lane: 'large', size: bigText.length });
    const bomb = await upload(t, collectionId, 'bomb.docx', readFileSync(fixturePath(REJECTED_FIXTURES.zipBombDocx)));
    const notes = await addNotes(t, collectionId, 5);

    for (const id of notes.keys()) {
      const note = await waitForFile(t, collectionId, id);
      expect(note).toMatchObject({ status: 'indexed', lane: 'standard' });
      expect(note.progress).toBeUndefined();
    }
    expect(await waitForFile(t, collectionId, bomb.body.id)).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^zip bomb: /),
    });
    const moved = await waitUntil(t, collectionId, longPdf.body.id, 'moved to the large lane', (file) => file.lane === 'large');
    expect(moved).toMatchObject({ status: 'pending', progress: { stage: 'queued' }, type: 'application/pdf' });
    // Nothing runs the large lane here: both wait, whatever else has finished.
    for (const id of [longPdf.body.id, big.body.id]) {
      expect((await t.request('GET', `/api/v1/collections/${collectionId}/files/${id}`)).body).toMatchObject({
        status: 'pending',
        lane: 'large',
      });
    }
    const listed = await t.request('GET', `/api/v1/collections/${collectionId}/files?status=pending`);
    expect(listed.body.items.map((file: any) => file.id).sort()).toEqual([longPdf.body.id, big.body.id].sort());
    await t.close();
    t = undefined;

    // A worker that runs the large lane takes them, reporting its stages as it goes.
    t = await startTestApp({ ...env, INGEST_LARGE_CONCURRENCY: '1' });
    const stages = new Set<string>();
    await waitUntil(t, collectionId, longPdf.body.id, 'indexed', (file) => {
      if (file.progress) stages.add(file.progress.stage);
      if (file.progress?.total) expect(file.progress.done).toBeLessThanOrEqual(file.progress.total);
      return file.status === 'indexed' || file.status === 'error';
    });
    for (const id of [longPdf.body.id, big.body.id]) {
      const file = await waitForFile(t, collectionId, id);
      expect(file).toMatchObject({ status: 'indexed', lane: 'large' });
      expect(file.progress).toBeUndefined();
    }
    expect([...stages].every((stage) => ['queued', 'fetching', 'extracting', 'embedding', 'indexing'].includes(stage))).toBe(true);
    const found = await t.request('POST', `/api/v1/collections/${collectionId}/search`, {
      body: { text: 'big files apart in large lanes', top_k: 1 },
    });
    expect(found.body.result[0]).toMatchObject({ fileId: big.body.id });
    const content = await t.request('GET', `/api/v1/collections/${collectionId}/files/${longPdf.body.id}/content`);
    expect(content.body.content).toMatch(/Section 6/);
  }, 240_000);
});
