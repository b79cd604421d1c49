/**
 * Completed runs per second of webhook-trigger -> http-request -> list-files on this machine,
 * printed with webhook-trigger -> http-request measured in the same run, same process, same load.
 * The HTTP Request node is the done-when one of the runtime (URL template over a variable, a
 * secret header, a JSON body built from the input) calling the bare Fastify hello-world server in
 * its own process; List Files then reads the first page (20 of 25 indexed files) of a collection
 * with the rights of the user who started the run. The app runs as one process (APP_ROLE=all, the
 * embedded queue, SQLite); RUNS webhooks are sent at 50 connections and the clock stops when the
 * last run has finished. Embeddings come from a local fake so that ingestion is over before the
 * clock starts.
 * Target: >= 300 runs/s for the three nodes. Baseline: the two-node workflow.
 */
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { BENCH_KEY, call, load, percentile, report, startApp, startHelloServer } from './lib/bench-kit';

const CONNECTIONS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const FILES = 25;
const KEY = BENCH_KEY;
const SECRET = 'sk-bench-secret-0123456789';

const trigger = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
const search = {
  id: 'search',
  type: 'http-request',
  parameters: { method: 'POST', url: '${variables.baseUrl}/hello', headers: '{"x-api-key": variables.apiKey}', body: '{"text": input.query, "top_k": "5"}' },
  parameterMode: { url: 'expression', headers: 'expression', body: 'expression' },
};
const variables = (upstreamUrl: string) => [
  { name: 'baseUrl', type: 'string', value: upstreamUrl },
  { name: 'apiKey', type: 'secret', value: SECRET },
];

interface Measured {
  runsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** Publishes the workflow, warms it up with one run, then times RUNS webhooks to their last finished run. */
async function measure(appUrl: string, label: string, definition: unknown): Promise<Measured> {
  const workflow = await call(appUrl, 'POST', '/api/v1/workflows', { name: label, definition });
  await call(appUrl, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
  const count = async (status: string) => (await call(appUrl, 'GET', `/api/v1/runs?workflowId=${workflow.id}&status=${status}&limit=1`)).total as number;
  const finished = async () => (await count('succeeded')) + (await count('failed'));

  await call(appUrl, 'POST', `/api/v1/workflows/${workflow.id}/runs`, { input: { query: 'warm-up' } });
  while ((await finished()) < 1) await new Promise((r) => setTimeout(r, 20));

  const started = performance.now();
  const accepted = await load({
    url: appUrl,
    path: `/api/v1/workflows/${workflow.id}/runs`,
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ input: { query: 'what is a vector' } }),
    connections: CONNECTIONS,
    durationMs: 120_000,
    maxRequests: RUNS,
  });
  if (accepted.statuses[202] !== RUNS) throw new Error(`${label}: accepted ${JSON.stringify(accepted.statuses)}, errors ${accepted.errors}`);
  const deadline = Date.now() + 120_000;
  for (let done = 0; (done = await finished()) < RUNS + 1; await new Promise((r) => setTimeout(r, 25))) {
    if (Date.now() > deadline) throw new Error(`${label}: only ${done} of ${RUNS + 1} runs finished`);
  }
  const seconds = (performance.now() - started) / 1000;
  const failed = await count('failed');
  if (failed) {
    const sample = await call(appUrl, 'GET', `/api/v1/runs?workflowId=${workflow.id}&status=failed&limit=1`);
    const run = await call(appUrl, 'GET', `/api/v1/runs/${sample.items[0].id}`);
    throw new Error(`${label}: ${failed} runs failed, e.g. ${JSON.stringify(run.error)}`);
  }

  const latencies: number[] = [];
  for (let offset = 0; offset < RUNS; offset += 100) {
    const page = await call(appUrl, 'GET', `/api/v1/runs?workflowId=${workflow.id}&offset=${offset}&limit=100`);
    for (const run of page.items) if (run.finishedAt) latencies.push(Date.parse(run.finishedAt) - Date.parse(run.createdAt));
  }
  latencies.sort((a, b) => a - b);
  const result = { runsPerSecond: RUNS / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
  console.log(
    `${label}: ${RUNS} runs in ${seconds.toFixed(2)} s = ${result.runsPerSecond.toFixed(0)} completed runs/s ` +
      `(accept-to-finish p50 ${result.p50Ms.toFixed(0)} ms, p99 ${result.p99Ms.toFixed(0)} ms)`,
  );
  return result;
}

/** A collection of small indexed text files; returns its id once every file is indexed. */
async function collectionOfNotes(appUrl: string): Promise<string> {
  const collection = await call(appUrl, 'POST', '/api/v1/collections', { name: 'bench notes' });
  for (let i = 0; i < FILES; i++) {
    const text = `Bench note ${i}: a short paragraph about rivers, herons and otters.`;
    await call(appUrl, 'POST', `/api/v1/collections/${collection.id}/files`, { name: `note-${i}.txt`, url: `data:text/plain;base64,${Buffer.from(text).toString('base64')}` });
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    const page = await call(appUrl, 'GET', `/api/v1/collections/${collection.id}/files?limit=100`);
    if (page.items.every((f: { status: string }) => f.status === 'indexed')) return collection.id;
    if (Date.now() > deadline) throw new Error('the bench collection was not indexed in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main() {
  const upstream = await startHelloServer();
  const embeddings = await FakeEmbeddingsServer.start();
  const app = await startApp({ APP_ROLE: 'all', FETCH_ALLOWED_HOSTS: '127.0.0.1', JOB_CONCURRENCY: '64', SWAGGER_ENABLED: 'false', EMBEDDINGS_URL: embeddings.url });
  try {
    const collectionId = await collectionOfNotes(app.url);
    const two = await measure(app.url, 'webhook-trigger -> http-request', {
      nodes: [trigger, search],
      edges: [{ from: 'trigger', to: 'search' }],
      variables: variables(upstream.url),
    });
    const three = await measure(app.url, 'webhook-trigger -> http-request -> list-files', {
      nodes: [trigger, search, { id: 'list', type: 'list-files', parameters: { collectionId } }],
      edges: [
        { from: 'trigger', to: 'search' },
        { from: 'search', to: 'list' },
      ],
      variables: variables(upstream.url),
    });
    report({
      bench: 'collection-nodes',
      metric: 'completed_runs_per_s_http_list_files',
      value: three.runsPerSecond,
      unit: 'runs/s',
      baseline: two.runsPerSecond,
      ratio: three.runsPerSecond / two.runsPerSecond,
      target: '>= 300 runs/s',
    });
    report({ bench: 'collection-nodes', metric: 'completed_runs_per_s_http', value: two.runsPerSecond, unit: 'runs/s', baseline: null, ratio: null, target: 'informational (baseline of the figure above)' });
    report({ bench: 'collection-nodes', metric: 'accept_to_finish_p50_http_list_files', value: three.p50Ms, unit: 'ms', baseline: two.p50Ms, ratio: three.p50Ms / two.p50Ms, target: 'informational' });
  } finally {
    await app.stop();
    await embeddings.close();
    await upstream.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
