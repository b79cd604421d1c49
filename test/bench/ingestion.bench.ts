/*
 * (a) Ingestion throughput: a ~200-page text PDF goes through the whole pipeline (blob -> type
 * detection -> extraction in a worker -> chunking -> embedding -> sqlite-vec + passages), against
 * the raw throughput of the same embedder, same thread count, on the very windows ingestion
 * embeds, in one call (its best case). Target: ingestion >= 0.8 x raw. Also reports peak RSS.
 *
 *   npx tsc -p tsconfig.build.json   (worker threads run from dist/)
 *   node --no-node-snapshot --expose-gc -r ./scripts/swc-register.js test/bench/ingestion.bench.ts
 */
import { performance } from 'node:perf_hooks';
import { chunk } from '../../src/ingestion/chunker';
import { detectType } from '../../src/ingestion/detect-type';
import { makeLargeTextPdf } from '../fixtures/pdf-builder';
import { mb, openPipeline, peakRss, reporter } from './ingestion-kit';

const PAGES = 200;
/** Raw and pipeline runs alternate; each keeps its best, so a neighbour's burst of CPU hurts neither side alone. */
const ROUNDS = 2;
/** A second round only when the first was quick: on a crowded machine the bench must still end. */
const SECOND_ROUND_WITHIN_S = 60;
const TARGET_RATIO = 0.8;

const report = reporter('ingestion');

async function main(): Promise<void> {
  const p = await openPipeline();
  try {
    const threads = p.config.EMBEDDING_THREADS;
    const pdf = makeLargeTextPdf(PAGES);

    // Steady state, as in a running service: models loaded, extraction worker started.
    await p.embedder.warmUp();
    await p.ingest(await p.addFile(await p.createCollection(), 'warm-up.pdf', { bytes: makeLargeTextPdf(2) }));

    const extractStarted = performance.now();
    const doc = await p.extractor.extract(Buffer.from(pdf), detectType(pdf));
    const extractMs = performance.now() - extractStarted;
    const { passages, windows } = chunk(doc);
    const texts = windows.map((w) => w.text);
    console.log(
      `${PAGES}-page PDF, ${(pdf.length / 1024).toFixed(0)} KB: ${passages.length} passages, ${texts.length} embedded windows; ` +
        `EMBEDDING_THREADS=${threads}; extraction alone ${extractMs.toFixed(0)} ms (the one step embedding cannot overlap)`,
    );

    let raw = 0;
    let pipeline = 0;
    let peak = 0;
    const benchStarted = performance.now();
    for (let round = 1; round <= ROUNDS; round++) {
      if (round > 1 && (performance.now() - benchStarted) / 1000 > SECOND_ROUND_WITHIN_S) break;
      let started = performance.now();
      await p.embedder.embed(texts);
      const rawRate = texts.length / ((performance.now() - started) / 1000);

      const collectionId = await p.createCollection();
      const file = await p.addFile(collectionId, 'report.pdf', { bytes: pdf });
      started = performance.now();
      const { result, peakBytes } = await peakRss(() => p.ingest(file));
      const seconds = (performance.now() - started) / 1000;
      const units = await p.index.countUnits(collectionId);
      if (units !== texts.length || result.chunkCount !== passages.length) {
        throw new Error(
          `ingestion indexed ${units} windows / ${result.chunkCount} passages; expected ${texts.length} / ${passages.length}`,
        );
      }
      const rate = units / seconds;
      console.log(
        `round ${round}: raw embedder ${rawRate.toFixed(1)} chunks/s; ingestion ${rate.toFixed(1)} chunks/s ` +
          `(${seconds.toFixed(1)} s end to end, ${(passages.length / seconds).toFixed(1)} passages/s), peak RSS ${mb(peakBytes).toFixed(0)} MB`,
      );
      raw = Math.max(raw, rawRate);
      pipeline = Math.max(pipeline, rate);
      peak = Math.max(peak, peakBytes);
    }

    report('chunks_per_second', pipeline, 'chunks/s', raw, TARGET_RATIO);
    report('peak_rss', mb(peak), 'MB', null);
  } finally {
    await p.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
