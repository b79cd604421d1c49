import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fixturePath, REJECTED_FIXTURES } from '../fixtures/fixtures';
import { makeLargeTextPdf } from '../fixtures/pdf-builder';
import { bothQueues } from '../utils/queues';
import { startTestApp, TestApp } from '../utils/test-app';
import { createCollection, upload, waitForFile } from './collections-files.helpers';

const DISK_BYTES = 2 * 1024 * 1024;

/** Mounts a tmpfs of `bytes` on `dir`; false (with the reason logged) where mounting is not permitted. */
function mountSmallDisk(dir: string, bytes: number): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    return true;
  } catch (error) {
    console.warn(
      `ingestion-disk-full: skipped, a small disk cannot be mounted here (needs root): ${(error as Error).message.split('\n')[0]}`,
    );
    return false;
  }
}

/**
 * A real full disk: DATA_DIR/blobs is a 2 MB tmpfs. An upload that does not fit answers 507 saying
 * where and how much to free, and nothing of it stays; a file given by URL whose download does not
 * fit waits `pending` with the reason and is indexed once space is freed; a corrupt PDF fails for
 * good all the same.
 */
describe.each(bothQueues('ingestion-disk-full'))('a full disk on $name', (setup) => {
  let dataDir: string;
  let blobDir: string;
  let mounted = false;
  let server: Server;
  let pdfUrl: string;
  let t: TestApp | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-disk-full-'));
    blobDir = join(dataDir, 'blobs');
    mkdirSync(blobDir);
    mounted = mountSmallDisk(blobDir, DISK_BYTES);
    // Two pages of text, made 1 MB by an image: more than is left once the filler is stored.
    const pdf = makeLargeTextPdf(2, { targetBytes: 1024 * 1024 });
    server = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    pdfUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/report.pdf`;
  });
  afterAll(async () => {
    await t?.close();
    await setup.cleanup();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    if (mounted) execFileSync('umount', ['-l', blobDir]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 507 naming what to free, and retries a file the service could not store once space returns', async () => {
    if (!mounted) return;
    // The reconciler looks every min(10 s, JOB_LEASE_MS).
    t = await startTestApp({ ...(await setup.env()), DATA_DIR: dataDir, FETCH_ALLOWED_HOSTS: '127.0.0.1', JOB_LEASE_MS: '5000' });
    const collectionId = await createCollection(t, 'Full disk');

    const filler = await upload(t, collectionId, 'filler.bin', randomBytes(1300 * 1024));
    expect(filler.status).toBe(201);
    const tooMuch = randomBytes(1300 * 1024);
    const refused = await upload(t, collectionId, 'second.bin', tooMuch);
    expect(refused.status).toBe(507);
    expect(refused.body).toMatchObject({
      code: 'INSUFFICIENT_STORAGE',
      details: { path: blobDir, bytesNeeded: tooMuch.length, bytesFree: expect.any(Number), bytesToFree: expect.any(Number) },
    });
    expect(refused.body.message).toContain(blobDir);
    expect(refused.body.message).toMatch(/Free at least .+ on that disk/);
    const listed = await t.request('GET', `/api/v1/collections/${collectionId}/files`);
    expect(listed.body.items.map((file: any) => file.name)).toEqual(['filler.bin']);

    // Accepted while the disk is full: the download cannot be stored, so the file waits with the reason.
    const report = await t.request('POST', `/api/v1/collections/${collectionId}/files`, { body: { name: 'report.pdf', url: pdfUrl } });
    expect(report.status).toBe(201);
    const waiting = await waitUntilWaiting(t, collectionId, report.body.id);
    expect(waiting.retryReason).toContain(blobDir);
    // A bad file is not the service's fault: it fails for good.
    const corrupt = await upload(t, collectionId, 'corrupt.pdf', readFileSync(fixturePath(REJECTED_FIXTURES.corruptPdf)));
    expect(await waitForFile(t, collectionId, corrupt.body.id)).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^corrupt PDF/),
    });

    expect((await t.request('DELETE', `/api/v1/collections/${collectionId}/files/${filler.body.id}`)).status).toBe(204);
    const indexed = await waitForFile(t, collectionId, report.body.id, ['indexed', 'error'], 120_000);
    expect(indexed).toMatchObject({ status: 'indexed', size: expect.any(Number) });
    expect(indexed.retryReason).toBeUndefined();
    const stillBad = (await t.request('GET', `/api/v1/collections/${collectionId}/files/${corrupt.body.id}`)).body;
    expect(stillBad).toMatchObject({ status: 'error', error: expect.stringMatching(/^corrupt PDF/) });
    // With room again, uploads are accepted.
    expect((await upload(t, collectionId, 'third.bin', randomBytes(300 * 1024))).status).toBe(201);
  });
});

async function waitUntilWaiting(t: TestApp, collectionId: string, fileId: string): Promise<any> {
  const deadline = Date.now() + 90_000;
  let last: any;
  while (Date.now() < deadline) {
    last = (await t.request('GET', `/api/v1/collections/${collectionId}/files/${fileId}`)).body;
    if (last.status === 'pending' && last.retryReason) return last;
    if (last.status === 'indexed' || last.status === 'error') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`file ${fileId} never waited for space; last: ${JSON.stringify(last)}`);
}
