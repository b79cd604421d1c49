/*
 * (c) Memory of a 100 MB PDF: the file is downloaded over HTTP through SafeFetch from a local
 * server that streams it from disk, stored as a blob, parsed in the extraction worker, and its
 * text chunked, embedded and indexed. Reports the process's peak RSS (main thread and every
 * worker thread) against its RSS before the download. Target: peak < 1 GB.
 *
 * The PDF is ~200 pages of text, each carrying an incompressible image that makes up the size:
 * what costs memory is the file's bytes, and what costs time is its text.
 *
 *   npx tsc -p tsconfig.build.json   (worker threads run from dist/)
 *   node --no-node-snapshot --expose-gc -r ./scripts/swc-register.js test/bench/ingestion-large-pdf.bench.ts
 */
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeLargeTextPdf } from '../fixtures/pdf-builder';
import { collectGarbage, mb, openPipeline, peakRss, reporter } from './ingestion-kit';

const TARGET_BYTES = 100 * 1000 * 1000;
const PAGES = 200;
const TARGET_PEAK_MB = 1024;

const report = reporter('ingestion-large-pdf');

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wcs-large-pdf-'));
  const path = join(dir, 'large.pdf');
  writeFileSync(path, makeLargeTextPdf(PAGES, { targetBytes: TARGET_BYTES }));
  const size = statSync(path).size;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': size });
    createReadStream(path).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/large.pdf`;

  const p = await openPipeline({ FETCH_ALLOWED_HOSTS: '127.0.0.1' });
  try {
    await p.embedder.warmUp();
    await p.ingest(await p.addFile(await p.createCollection(), 'warm-up.pdf', { bytes: makeLargeTextPdf(2) }));
    collectGarbage();
    const before = process.memoryUsage.rss();
    console.log(
      `${(size / 1e6).toFixed(1)} MB PDF of ${PAGES} pages; RSS before ingestion ${mb(before).toFixed(0)} MB (embedding models loaded)`,
    );

    const collectionId = await p.createCollection();
    const file = await p.addFile(collectionId, 'large.pdf', { url });
    const started = performance.now();
    const { result, peakBytes } = await peakRss(() => p.ingest(file));
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `indexed ${result.chunkCount} passages, ${await p.index.countUnits(collectionId)} chunks in ${seconds.toFixed(1)} s; ` +
        `peak RSS ${mb(peakBytes).toFixed(0)} MB (+${mb(peakBytes - before).toFixed(0)} MB)`,
    );
    if (result.size !== size) throw new Error(`stored size ${result.size}, expected ${size}`);

    report('peak_rss', mb(peakBytes), 'MB', mb(before), TARGET_PEAK_MB);
    report('rss_growth', mb(peakBytes - before), 'MB', size / 2 ** 20);
  } finally {
    await p.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
