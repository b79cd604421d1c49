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
import { call, measureRuns, MeasuredRuns, report, startApp, startHelloServer } from './lib/bench-kit';

const CONNECTIONS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 3000);
const FILES = 25;
const SECRET = 'sk-bench-secret-0123456789';

const trigger = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
const search = {
  id: 'search',
  type: 'http-request',
  parameters: {
    method: 'POST',
    url: '${variables.baseUrl}/hello',
    headers: '{"x-api-key": variables.apiKey}',
    body: '{"text": input.query, "top_k": "5"}',
  },
  parameterMode: { url: 'expression', headers: 'expression', body: 'expression' },
};
const variables = (upstreamUrl: string) => [
  { name: 'baseUrl', type: 'string', value: upstreamUrl },
  { name: 'apiKey', type: 'secret', value: SECRET },
];

/** Publishes the workflow, warms it up with one run, then times RUNS webhooks to their last finished run; no run may fail. */
async function measure(appUrl: string, label: string, definition: unknown): Promise<MeasuredRuns> {
  const result = await measureRuns(appUrl, label, definition, { query: 'what is a vector' }, { runs: RUNS, connections: CONNECTIONS });
  if (result.failed) throw new Error(`${label}: ${result.failed} runs failed`);
  return result;
}

/** A collection of small indexed text files; returns its id once every file is indexed. */
async function collectionOfNotes(appUrl: string): Promise<string> {
  const collection = await call(appUrl, 'POST', '/api/v1/collections', { name: 'bench notes' });
  for (let i = 0; i < FILES; i++) {
    const text = `Bench note ${i}: a short paragraph about rivers, herons and otters.`;
    await call(appUrl, 'POST', `/api/v1/collections/${collection.id}/files`, {
      name: `note-${i}.txt`,
      url: `data:text/plain;base64,${Buffer.from(text).toString('base64')}`,
    });
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
  const app = await startApp({
    APP_ROLE: 'all',
    FETCH_ALLOWED_HOSTS: '127.0.0.1',
    JOB_CONCURRENCY: '64',
    SWAGGER_ENABLED: 'false',
    EMBEDDINGS_URL: embeddings.url,
  });
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
    report({
      bench: 'collection-nodes',
      metric: 'completed_runs_per_s_http',
      value: two.runsPerSecond,
      unit: 'runs/s',
      baseline: null,
      ratio: null,
      target: 'informational (baseline of the figure above)',
    });
    report({
      bench: 'collection-nodes',
      metric: 'accept_to_finish_p50_http_list_files',
      value: three.p50Ms,
      unit: 'ms',
      baseline: two.p50Ms,
      ratio: three.p50Ms / two.p50Ms,
      target: 'informational',
    });
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
