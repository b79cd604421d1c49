/*
 * Ingestion of many small files, and fairness next to a huge one, through the whole service: the
 * app from dist/ in its own process (embedded queue, SQLite, local embedder with the configured
 * EMBEDDING_THREADS), files added over HTTP.
 *
 * (a) 1,000 one-paragraph files added as data: URLs by 8 concurrent clients, timed from the first
 *     request to the last file `indexed`: files/s, against the embedder's floor measured in the
 *     same run (a LocalEmbedder of the same thread count in this process, embedding in one call
 *     the very windows ingestion embeds for those files, while the app idles). Target >= 0.6.
 * (b) Fairness: the time from adding a small file to its being `indexed`, for 40 small files
 *     added while a 10,000-page PDF is being ingested in the large-file lane, against the same
 *     without it; and the time a zip bomb takes to be refused meanwhile. Then the same beside a
 *     1,500-page PDF (moved to the large lane by its page count) while its pages are embedded,
 *     where the two share the embedder. The large PDFs are deleted afterwards, not waited for.
 *
 *   npx tsc -p tsconfig.build.json   (the app and worker threads run from dist/)
 *   node --no-node-snapshot --expose-gc -r ./scripts/swc-register.js test/bench/ingestion-fair.bench.ts
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config/app-config';
import { LocalEmbedder } from '../../src/embeddings/local/local-embedder.adapter';
import { chunk } from '../../src/ingestion/chunker';
import { fixturePath, REJECTED_FIXTURES } from '../fixtures/fixtures';
import { makeLargeTextPdf } from '../fixtures/pdf-builder';
import { BENCH_KEY, call, ServerProcess, startApp } from './lib/bench-kit';
import { percentile, reporter } from './ingestion-kit';

const FILES = 1000;
const CLIENTS = 8;
const SMALL_FILES = 40;
const LARGE_PDF_PAGES = 10_000;
/** Over INGEST_LARGE_PAGES but quick to extract: measured beside while its pages are embedded. */
const EMBEDDING_PDF_PAGES = 1500;
const TARGET_RATIO = 0.6;
/** Small files may take at most this many times longer to index beside the large PDF. */
const FAIRNESS_TARGET = 2;
const DEADLINE_MS = 10 * 60 * 1000;

const report = reporter('ingestion-fair');
let lastApp: ServerProcess | undefined;

const SENTENCES = [
  'The river rises each spring when the snow on the northern ridges melts.',
  'Farmers along its banks plant late so the floods do not wash the seed away.',
  'A ferry crosses at the old mill, carrying bicycles, goats and the morning post.',
  'The library keeps the parish records from the year the bridge was built.',
  'Children learn to swim in the shallow bend below the church.',
  'In autumn the herons gather on the sandbanks before flying south.',
  'The council voted to repair the towpath with gravel rather than asphalt.',
  'Anglers report that the trout have returned since the tannery closed.',
  'Night trains cross the viaduct twice an hour, lit like lanterns over the water.',
  'The museum shows a canoe carved from a single oak, found in the mud in 1958.',
  'Volunteers count the otters every March and publish the numbers in the newsletter.',
  'A sudden storm once carried the bandstand three hundred metres downstream.',
];

/** One paragraph of three to five sentences, with words of its own so no two files are alike. */
function paragraph(i: number): string {
  const count = 3 + (i % 3);
  const parts = Array.from({ length: count }, (_, k) => SENTENCES[(i * 7 + k * 5) % SENTENCES.length]);
  return `Note ${i} on river ${(i * 7919) % 1000}: ${parts.join(' ')}`;
}

const dataUrl = (text: string) => `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;

/** Runs `work` for every item with `clients` at a time. */
async function pooled<T>(items: T[], clients: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

async function embedderFloor(threads: number, texts: string[]): Promise<number> {
  const embedder = new LocalEmbedder({ threads });
  try {
    await embedder.warmUp();
    await embedder.embed(texts.slice(0, 64));
    const started = performance.now();
    await embedder.embed(texts);
    return (performance.now() - started) / 1000;
  } finally {
    await embedder.close();
  }
}

async function waitIndexed(app: ServerProcess, collectionId: string, count: number): Promise<void> {
  const deadline = performance.now() + DEADLINE_MS;
  for (;;) {
    const stats = await call(app.url, 'GET', `/api/v1/collections/${collectionId}/stats`);
    if (stats.files.error > 0) throw new Error(`${stats.files.error} files failed`);
    if (stats.files.indexed >= count) return;
    if (performance.now() > deadline) throw new Error(`only ${stats.files.indexed} of ${count} files indexed in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Adds small files and returns each one's time from its request to its being seen `indexed`. */
async function smallFileLatencies(app: ServerProcess, tag: string): Promise<number[]> {
  // A collection of their own: the listing polled below holds them and nothing else.
  const collectionId = (await call(app.url, 'POST', '/api/v1/collections', { name: `small files ${tag}` })).id as string;
  const addedAt = new Map<string, number>();
  const latencies = new Map<string, number>();
  const adding = pooled(
    Array.from({ length: SMALL_FILES }, (_, i) => i),
    4,
    async (i) => {
      const started = performance.now();
      const file = await call(app.url, 'POST', `/api/v1/collections/${collectionId}/files`, {
        name: `${tag}-${i}.txt`,
        url: dataUrl(paragraph(5000 + i)),
      });
      addedAt.set(file.id, started);
    },
  );
  const deadline = performance.now() + DEADLINE_MS;
  let added = false;
  adding.then(
    () => (added = true),
    () => undefined,
  );
  while (!added || latencies.size < SMALL_FILES) {
    const page = await call(app.url, 'GET', `/api/v1/collections/${collectionId}/files?status=indexed,error&limit=100`);
    const now = performance.now();
    for (const file of page.items as { id: string; status: string }[]) {
      const at = addedAt.get(file.id);
      if (at === undefined || latencies.has(file.id)) continue;
      if (file.status === 'error') throw new Error(`small file ${file.id} failed`);
      latencies.set(file.id, now - at);
    }
    if (performance.now() > deadline) throw new Error(`only ${latencies.size} of ${SMALL_FILES} small files indexed in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await adding;
  return [...latencies.values()].sort((a, b) => a - b);
}

async function upload(app: ServerProcess, collectionId: string, name: string, bytes: Buffer, type: string): Promise<{ id: string }> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const res = await fetch(`${app.url}/api/v1/collections/${collectionId}/files/upload`, {
    method: 'POST',
    headers: { 'x-api-key': BENCH_KEY },
    body: form,
  });
  if (res.status !== 201) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

async function fileOf(app: ServerProcess, collectionId: string, fileId: string): Promise<any> {
  return call(app.url, 'GET', `/api/v1/collections/${collectionId}/files/${fileId}`);
}

async function main(): Promise<void> {
  const threads = loadConfig().EMBEDDING_THREADS;
  const texts = Array.from({ length: FILES }, (_, i) => paragraph(i));
  const windows = texts.flatMap((text) => chunk({ segments: [{ text }] }).windows.map((w) => w.text));
  console.log(
    `${FILES} one-paragraph files (${(texts.reduce((n, t) => n + t.length, 0) / FILES).toFixed(0)} characters on average), ${windows.length} embedded windows; EMBEDDING_THREADS=${threads}`,
  );

  const floorBefore = await embedderFloor(threads, windows);
  const app = await startApp({ LOG_LEVEL: 'error' });
  lastApp = app;
  try {
    // Steady state: models loaded, extraction workers started.
    const warm = (await call(app.url, 'POST', '/api/v1/collections', { name: 'warm-up' })).id;
    await pooled([0, 1, 2, 3, 4, 5, 6, 7], 4, async (i) => {
      await call(app.url, 'POST', `/api/v1/collections/${warm}/files`, { name: `w${i}.txt`, url: dataUrl(paragraph(9000 + i)) });
    });
    await waitIndexed(app, warm, 8);

    const collectionId = (await call(app.url, 'POST', '/api/v1/collections', { name: 'many small files' })).id;
    const started = performance.now();
    await pooled(
      texts.map((text, i) => ({ text, i })),
      CLIENTS,
      async ({ text, i }) => {
        await call(app.url, 'POST', `/api/v1/collections/${collectionId}/files`, { name: `note-${i}.txt`, url: dataUrl(text) });
      },
    );
    const acceptedS = (performance.now() - started) / 1000;
    await waitIndexed(app, collectionId, FILES);
    const seconds = (performance.now() - started) / 1000;
    const floorAfter = await embedderFloor(threads, windows);
    // The better of the two floors: the stricter baseline.
    const floorS = Math.min(floorBefore, floorAfter);
    const rate = FILES / seconds;
    const floorRate = FILES / floorS;
    console.log(
      `ingested ${FILES} files in ${seconds.toFixed(1)} s (all accepted after ${acceptedS.toFixed(1)} s): ${rate.toFixed(1)} files/s; ` +
        `embedder alone on their ${windows.length} windows: ${floorBefore.toFixed(1)} s before, ${floorAfter.toFixed(1)} s after (${floorRate.toFixed(1)} files/s)`,
    );
    report('files_per_second', rate, 'files/s', floorRate, TARGET_RATIO);

    // (b) fairness.
    const fair = (await call(app.url, 'POST', '/api/v1/collections', { name: 'fairness' })).id;
    const alone = await smallFileLatencies(app, 'alone');
    const pdf = makeLargeTextPdf(LARGE_PDF_PAGES);
    const large = await upload(app, fair, 'huge.pdf', pdf, 'application/pdf');
    const deadline = performance.now() + DEADLINE_MS;
    let largeState = await fileOf(app, fair, large.id);
    while (!(largeState.lane === 'large' && largeState.status === 'processing')) {
      if (largeState.status === 'error' || performance.now() > deadline)
        throw new Error(`the large PDF did not start in the large lane: ${JSON.stringify(largeState)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      largeState = await fileOf(app, fair, large.id);
    }
    console.log(
      `${LARGE_PDF_PAGES}-page PDF (${(pdf.length / 1e6).toFixed(1)} MB) processing in the large lane: ${JSON.stringify(largeState.progress)}`,
    );
    const beside = await smallFileLatencies(app, 'beside');
    const bombStarted = performance.now();
    const bomb = await upload(app, fair, 'bomb.docx', readFileSync(fixturePath(REJECTED_FIXTURES.zipBombDocx)), 'application/octet-stream');
    let bombState = await fileOf(app, fair, bomb.id);
    while (bombState.status !== 'error') {
      if (bombState.status === 'indexed' || performance.now() > deadline)
        throw new Error(`the zip bomb was not refused: ${JSON.stringify(bombState)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      bombState = await fileOf(app, fair, bomb.id);
    }
    const bombMs = performance.now() - bombStarted;
    largeState = await fileOf(app, fair, large.id);
    console.log(
      `small files alone: p50 ${percentile(alone, 50).toFixed(0)} ms, p95 ${percentile(alone, 95).toFixed(0)} ms; ` +
        `beside the large PDF: p50 ${percentile(beside, 50).toFixed(0)} ms, p95 ${percentile(beside, 95).toFixed(0)} ms; ` +
        `zip bomb refused after ${bombMs.toFixed(0)} ms (${bombState.error}); the large PDF meanwhile: ${largeState.status}, ${JSON.stringify(largeState.progress ?? null)}`,
    );
    report('small_file_p50_beside_large_pdf', percentile(beside, 50), 'ms', percentile(alone, 50), FAIRNESS_TARGET);
    report('small_file_p95_beside_large_pdf', percentile(beside, 95), 'ms', percentile(alone, 95), FAIRNESS_TARGET);
    report('zip_bomb_refusal_beside_large_pdf', bombMs, 'ms', null);
    await call(app.url, 'DELETE', `/api/v1/collections/${fair}/files/${large.id}`).catch(() => undefined);

    const embedding = await upload(app, fair, 'long.pdf', makeLargeTextPdf(EMBEDDING_PDF_PAGES), 'application/pdf');
    let embeddingState = await fileOf(app, fair, embedding.id);
    while (!(embeddingState.lane === 'large' && embeddingState.progress?.stage === 'embedding')) {
      if (embeddingState.status !== 'pending' && embeddingState.status !== 'processing')
        throw new Error(`the ${EMBEDDING_PDF_PAGES}-page PDF ended before being measured beside: ${JSON.stringify(embeddingState)}`);
      if (performance.now() > deadline)
        throw new Error(`the ${EMBEDDING_PDF_PAGES}-page PDF did not reach embedding in time: ${JSON.stringify(embeddingState)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      embeddingState = await fileOf(app, fair, embedding.id);
    }
    const besideEmbedding = await smallFileLatencies(app, 'embedding');
    embeddingState = await fileOf(app, fair, embedding.id);
    console.log(
      `beside a ${EMBEDDING_PDF_PAGES}-page PDF being embedded in the large lane: p50 ${percentile(besideEmbedding, 50).toFixed(0)} ms, ` +
        `p95 ${percentile(besideEmbedding, 95).toFixed(0)} ms; the PDF meanwhile: ${embeddingState.status}, ${JSON.stringify(embeddingState.progress ?? null)}`,
    );
    report('small_file_p50_beside_embedding_pdf', percentile(besideEmbedding, 50), 'ms', percentile(alone, 50), FAIRNESS_TARGET);
    report('small_file_p95_beside_embedding_pdf', percentile(besideEmbedding, 95), 'ms', percentile(alone, 95), FAIRNESS_TARGET);
    await call(app.url, 'DELETE', `/api/v1/collections/${fair}/files/${embedding.id}`).catch(() => undefined);
  } finally {
    await app.stop();
  }
}

main().catch((error) => {
  console.error(error);
  console.error(`the service: exit code ${lastApp?.child.exitCode}, signal ${lastApp?.child.signalCode}`);
  process.exit(1);
});
