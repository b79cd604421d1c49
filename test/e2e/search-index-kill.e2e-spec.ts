import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { bootService, freePort, Spawned, stopService, tempDir } from '../utils/processes';

const root = join(__dirname, '..', '..');
const KEY = 'wcs_test_search_index_kill_key_0123456789';
const FILES = 12;
const SENTENCES = 40;

/**
 * One sentence of about 390 characters: alone in its embedding window (windows hold at most 400),
 * so querying with it embeds to exactly that window's vector (the fake embedder hashes the text).
 */
const sentence = (file: number, n: number) =>
  `Record ${file}-${n} describes ${'the lantern keeper who walks the harbour wall at dusk and counts the boats '.repeat(4)}`
    .slice(0, 385)
    .trimEnd() + '.';

/**
 * The vector index is derived from the store: a process killed with SIGKILL while files are being
 * indexed leaves, after a restart, a search that finds every passage of every indexed file and
 * nothing that is not stored, and deleting a file removes its vectors.
 */
describe('vector index: SIGKILL while indexing, then a restart', () => {
  let embeddings: FakeEmbeddingsServer;
  let service: Spawned | undefined;
  let dataDir: string;
  let port: number;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    embeddings = await FakeEmbeddingsServer.start({ dimension: 64 });
    dataDir = tempDir('index-kill');
    port = await freePort();
  }, 240_000);

  afterAll(async () => {
    await stopService(service);
    await embeddings?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const url = () => `http://127.0.0.1:${port}`;
  const boot = () =>
    bootService(port, { DATA_DIR: dataDir, BOOTSTRAP_API_KEY: KEY, EMBEDDINGS_URL: embeddings.url, REDIS_URL: '', JOB_LEASE_MS: '3000' });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url() + path, {
      method,
      headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };
  const files = async (collectionId: string) => {
    const all: any[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await call('GET', `/api/v1/collections/${collectionId}/files?offset=${offset}&limit=100`);
      expect(page.status).toBe(200);
      const items = page.body.items ?? page.body.result ?? page.body;
      all.push(...items);
      if (items.length < 100) return all;
    }
  };

  it('finds every passage of every indexed file after the restart, and none of a deleted file', async () => {
    service = await boot();
    const created = await call('POST', '/api/v1/collections', { name: 'Killed while indexing' });
    expect(created.status).toBe(201);
    const collectionId = created.body.id as string;
    const fileIds: string[] = [];
    for (let f = 0; f < FILES; f++) {
      const text = Array.from({ length: SENTENCES }, (_, n) => sentence(f, n)).join('\n\n');
      const form = new FormData();
      form.append('file', new Blob([text], { type: 'text/plain' }), `record-${f}.txt`);
      const res = await fetch(`${url()}/api/v1/collections/${collectionId}/files/upload`, {
        method: 'POST',
        headers: { 'x-api-key': KEY },
        body: form,
      });
      expect(res.status).toBe(201);
      fileIds.push(((await res.json()) as any).id);
    }
    // Killed once some files are indexed and others are not: mid-way through indexing.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const indexed = (await files(collectionId)).filter((file) => file.status === 'indexed').length;
      if (indexed >= 2) break;
      if (Date.now() > deadline) throw new Error(`no file indexed within 120 s:\n${service.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Every process of the service at once: the worker processes do the indexing.
    service.killAll('SIGKILL');
    expect(await service.exited(60_000)).toEqual({ code: null, signal: 'SIGKILL' });

    service = await boot();
    const restartDeadline = Date.now() + 180_000;
    for (;;) {
      const listed = await files(collectionId);
      if (listed.every((file) => file.status === 'indexed')) break;
      if (Date.now() > restartDeadline)
        throw new Error(`files not indexed after the restart: ${JSON.stringify(listed.map((f) => f.status))}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    for (let f = 0; f < FILES; f++) {
      for (const n of [0, SENTENCES - 1, (f * 7) % SENTENCES]) {
        const found = await call('POST', `/api/v1/collections/${collectionId}/search`, { text: sentence(f, n), top_k: 1 });
        expect(found.status).toBe(200);
        expect(found.body.result[0]).toMatchObject({ fileId: fileIds[f], content: expect.stringContaining(`Record ${f}-${n} `) });
        expect(found.body.result[0].distance).toBeLessThan(1e-4);
      }
    }

    const gone = fileIds[3];
    expect((await call('DELETE', `/api/v1/collections/${collectionId}/files/${gone}`)).status).toBe(204);
    const after = await call('POST', `/api/v1/collections/${collectionId}/search`, { text: sentence(3, 5), top_k: 10 });
    expect(after.status).toBe(200);
    expect(after.body.result.length).toBeGreaterThan(0);
    expect(after.body.result.map((hit: { fileId: string }) => hit.fileId)).not.toContain(gone);
  }, 600_000);
});
