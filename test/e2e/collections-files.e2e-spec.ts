import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FILE_INGEST_JOB } from '../../src/ingestion/ingestion.job';
import { JobQueue } from '../../src/domain/job-queue.port';
import { VectorIndex } from '../../src/domain/vector-index.port';
import { fixturePath, SEARCH_FIXTURES } from '../fixtures/fixtures';
import { bothQueues } from '../utils/queues';
import { startTestApp, TestApp } from '../utils/test-app';
import { createCollection, FixtureServer, startFixtureServer, waitForFile } from './collections-files.helpers';

/**
 * The "done when" of collections that understand documents, over real HTTP: fixture documents
 * served by a local server are added by URL, ingested by the queued job, and found by paraphrased
 * questions that share no keyword with their answer; deleting removes them from search.
 */
describe.each(bothQueues('collections'))('collections: files and semantic search over real HTTP, on $name', (queue) => {
  let t: TestApp;
  let server: FixtureServer;
  let collectionId: string;
  const fileIds = new Map<string, string>();

  const search = (body: unknown, key?: string) => t.request('POST', `/api/v1/collections/${collectionId}/search`, { body, key });

  beforeAll(async () => {
    server = await startFixtureServer();
    t = await startTestApp({ ...(await queue.env()), FETCH_ALLOWED_HOSTS: '127.0.0.1' });
    collectionId = await createCollection(t, 'Handbook');
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
    await queue.cleanup();
  });

  it('accepts each fixture by URL at once, as a pending file', async () => {
    for (const fixture of SEARCH_FIXTURES) {
      const res = await t.request('POST', `/api/v1/collections/${collectionId}/files`, {
        body: { name: fixture.file, url: `${server.url}/${fixture.file}` },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^fle_/),
        name: fixture.file,
        type: 'application/octet-stream',
        size: 0,
        status: 'pending',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        lane: 'standard',
        progress: { stage: 'queued', done: 0, total: 0 },
        metadata: {},
      });
      fileIds.set(fixture.file, res.body.id);
    }
  });

  it('indexes every fixture, recording its detected type and size', async () => {
    for (const fixture of SEARCH_FIXTURES) {
      const file = await waitForFile(t, collectionId, fileIds.get(fixture.file)!);
      expect(file).toMatchObject({ status: 'indexed', type: fixture.mime, size: statSync(fixturePath(fixture.file)).size });
      expect(file.error).toBeUndefined();
    }
  });

  it('lists the files oldest first with offset paging', async () => {
    const all = await t.request('GET', `/api/v1/collections/${collectionId}/files`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(SEARCH_FIXTURES.length);
    expect(all.body.items.map((f: { name: string }) => f.name)).toEqual(SEARCH_FIXTURES.map((f) => f.file));
    const page = await t.request('GET', `/api/v1/collections/${collectionId}/files?offset=2&limit=2`);
    expect(page.body.items.map((f: { name: string }) => f.name)).toEqual(SEARCH_FIXTURES.slice(2, 4).map((f) => f.file));
    expect((await t.request('GET', `/api/v1/collections/${collectionId}/files?limit=101`)).status).toBe(400);
  });

  it.each(SEARCH_FIXTURES.map((f) => [f.topic, f] as const))(
    'ranks the passage answering a paraphrased question first: %s',
    async (_topic, fixture) => {
      const res = await search({ text: fixture.question, top_k: '5' });
      expect(res.status).toBe(200);
      const [first] = res.body.result;
      expect(first.content).toContain(fixture.expectedSnippet);
      expect(first).toMatchObject({
        id: expect.stringMatching(/^psg_/),
        fileId: fileIds.get(fixture.file),
        fileName: fixture.file,
        chunkIndex: expect.any(Number),
      });
      if (fixture.mime === 'application/pdf') expect(first.page).toBeGreaterThanOrEqual(1);
      const distances = res.body.result.map((r: { distance: number }) => r.distance);
      expect(distances).toEqual([...distances].sort((a, b) => a - b));
      // Each passage once, whatever number of its windows matched.
      expect(new Set(res.body.result.map((r: { id: string }) => r.id)).size).toBe(res.body.result.length);
    },
  );

  it('pages with offset and top_k, as numbers or numeric strings', async () => {
    const question = SEARCH_FIXTURES[0].question;
    const firstFour = (await search({ text: question, top_k: 4 })).body.result;
    expect(firstFour).toHaveLength(4);
    const next = (await search({ text: question, top_k: '2', offset: 2 })).body.result;
    expect(next.map((r: { id: string }) => r.id)).toEqual(firstFour.slice(2).map((r: { id: string }) => r.id));
    const byDefault = (await search({ text: question })).body.result;
    expect(byDefault.length).toBeLessThanOrEqual(10);
    expect(byDefault[0].id).toBe(firstFour[0].id);
  });

  it('fuses vector and keyword ranks in hybrid mode, every result with a real distance', async () => {
    const res = await search({ text: 'waggle dance comb', top_k: 3, mode: 'hybrid' });
    expect(res.status).toBe(200);
    expect(res.body.result[0].fileName).toBe('honeybees.csv');
    for (const item of res.body.result) {
      expect(item.distance).toBeGreaterThanOrEqual(0);
      expect(item.distance).toBeLessThanOrEqual(2);
    }
  });

  it('refuses bad search input with 400 naming the field', async () => {
    for (const body of [
      { text: '' },
      { text: 'x', top_k: 0 },
      { text: 'x', top_k: 101 },
      { text: 'x', top_k: 'ten' },
      { text: 'x', top_k: '2.5' },
      { text: 'x', offset: -1 },
      { text: 'x', mode: 'fuzzy' },
      { query: 'x' },
      { text: 42 },
    ]) {
      const res = await search(body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'VALIDATION_FAILED' });
    }
  });

  it('gives the extracted text of an indexed file', async () => {
    const fixture = SEARCH_FIXTURES.find((f) => f.file === 'sourdough.docx')!;
    const res = await t.request('GET', `/api/v1/collections/${collectionId}/files/${fileIds.get(fixture.file)}/content`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: fileIds.get(fixture.file), name: fixture.file, type: fixture.mime });
    expect(res.body.content).toContain(fixture.expectedSnippet);
  });

  it('counts files by status, bytes, chunks and characters', async () => {
    const res = await t.request('GET', `/api/v1/collections/${collectionId}/stats`);
    const bytes = SEARCH_FIXTURES.reduce((sum, f) => sum + statSync(fixturePath(f.file)).size, 0);
    expect(res.body).toMatchObject({
      collectionId,
      files: { total: SEARCH_FIXTURES.length, indexed: SEARCH_FIXTURES.length, pending: 0, processing: 0, error: 0 },
      bytes,
    });
    expect(res.body.chunks).toBeGreaterThanOrEqual(SEARCH_FIXTURES.length);
    expect(res.body.characters).toBeGreaterThan(1000);
  });

  it('takes a multipart upload and a data: URL', async () => {
    const form = new FormData();
    form.append('file', new Blob([readFileSync(fixturePath('volcanoes.pdf'))], { type: 'application/pdf' }), 'volcanoes.pdf');
    form.append('name', 'Volcanoes (uploaded).pdf');
    const upload = await fetch(`${t.url}/api/v1/collections/${collectionId}/files/upload`, {
      method: 'POST',
      headers: { 'x-api-key': t.admin.key },
      body: form,
    });
    expect(upload.status).toBe(201);
    const uploaded = (await upload.json()) as { id: string };
    expect(uploaded).toMatchObject({ name: 'Volcanoes (uploaded).pdf', type: 'application/pdf', status: 'pending' });

    const text = 'Lighthouse keepers once trimmed the wick of the lamp every few hours through the night.';
    const dataUrl = `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;
    const added = await t.request('POST', `/api/v1/collections/${collectionId}/files`, { body: { name: 'keepers.txt', url: dataUrl } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ type: 'text/plain', size: Buffer.byteLength(text) });

    expect(await waitForFile(t, collectionId, uploaded.id)).toMatchObject({
      status: 'indexed',
      size: statSync(fixturePath('volcanoes.pdf')).size,
    });
    expect(await waitForFile(t, collectionId, added.body.id)).toMatchObject({ status: 'indexed', type: 'text/plain' });
    const found = await search({ text: 'Who tended the beacon on the coast after dark?', top_k: 1 });
    expect(found.body.result[0]).toMatchObject({ fileId: added.body.id, content: text });

    for (const id of [uploaded.id, added.body.id]) {
      expect((await t.request('DELETE', `/api/v1/collections/${collectionId}/files/${id}`)).status).toBe(204);
    }
  });

  it('deletes a file with its passages, vectors and original bytes', async () => {
    const fixture = SEARCH_FIXTURES[0];
    const fileId = fileIds.get(fixture.file)!;
    const blob = join(t.dataDir, 'blobs', 'files', collectionId, fileId);
    expect(existsSync(blob)).toBe(true);
    const index = t.app.get(VectorIndex);
    const unitsBefore = await index.countUnits(collectionId);

    expect((await t.request('DELETE', `/api/v1/collections/${collectionId}/files/${fileId}`)).status).toBe(204);

    const res = await search({ text: fixture.question, top_k: 100 });
    expect(res.body.result.filter((r: { fileId: string }) => r.fileId === fileId)).toEqual([]);
    expect(res.body.result.some((r: { content: string }) => r.content.includes(fixture.expectedSnippet))).toBe(false);
    expect((await t.request('GET', `/api/v1/collections/${collectionId}/files/${fileId}`)).status).toBe(404);
    expect((await t.request('DELETE', `/api/v1/collections/${collectionId}/files/${fileId}`)).status).toBe(404);
    expect(existsSync(blob)).toBe(false);
    expect(await index.countUnits(collectionId)).toBeLessThan(unitsBefore);
    const stats = (await t.request('GET', `/api/v1/collections/${collectionId}/stats`)).body;
    expect(stats.files.total).toBe(SEARCH_FIXTURES.length - 1);
  });

  it('lets viewers read and search, editors add and delete, and hides the collection from strangers', async () => {
    const viewer = await t.createUser('viewer');
    const editor = await t.createUser('editor');
    const stranger = await t.createUser('stranger');
    await t.request('PUT', `/api/v1/collections/${collectionId}/members/${viewer.id}`, { body: { role: 'viewer' } });
    await t.request('PUT', `/api/v1/collections/${collectionId}/members/${editor.id}`, { body: { role: 'editor' } });
    const add = { name: 'x.csv', url: `${server.url}/honeybees.csv` };

    expect((await search({ text: 'bees' }, viewer.key)).status).toBe(200);
    expect((await t.request('GET', `/api/v1/collections/${collectionId}/files`, { key: viewer.key })).status).toBe(200);
    const refused = await t.request('POST', `/api/v1/collections/${collectionId}/files`, { key: viewer.key, body: add });
    expect(refused.status).toBe(403);

    const added = await t.request('POST', `/api/v1/collections/${collectionId}/files`, { key: editor.key, body: add });
    expect(added.status).toBe(201);
    const del = await t.request('DELETE', `/api/v1/collections/${collectionId}/files/${added.body.id}`, { key: editor.key });
    expect(del.status).toBe(204);
    // An ingestion still running when its file is deleted removes what it wrote last; let it finish.
    const queue = t.app.get(JobQueue);
    while ((await queue.state(FILE_INGEST_JOB, added.body.id)) !== 'missing') await new Promise((r) => setTimeout(r, 50));

    expect((await search({ text: 'bees' }, stranger.key)).status).toBe(404);
    expect((await t.request('GET', `/api/v1/collections/${collectionId}/files`, { key: stranger.key })).status).toBe(404);
  });

  it('deletes a collection with all of its files, vectors and bytes', async () => {
    const index = t.app.get(VectorIndex);
    expect(await index.countUnits(collectionId)).toBeGreaterThan(0);
    expect((await t.request('DELETE', `/api/v1/collections/${collectionId}`)).status).toBe(204);
    expect(await index.countUnits(collectionId)).toBe(0);
    expect(existsSync(join(t.dataDir, 'blobs', 'files', collectionId))).toBe(false);
    expect((await t.request('GET', `/api/v1/collections/${collectionId}/files`)).status).toBe(404);
  });
});
