/**
 * (c) Completed runs per second of webhook-trigger -> http-request on this machine. The workflow
 * is the done-when one: URL template over a variable, a secret header, a JSON body built from the
 * input; the local upstream is the bare Fastify hello-world server in its own process. The app
 * runs as one process (APP_ROLE=all); RUNS webhooks are sent at 50 connections and the clock
 * stops when the last run has succeeded. Measured on the embedded queue and on Bull.
 * Target: >= 500 runs/s. Baseline: the bare Fastify POST route at the same 50 connections.
 * References (not measured here): n8n publishes 220 executions/s for a two-node workflow on a
 * 2-vCPU instance; n8n 2.8.4 measured on a machine like ours: 86 executions/s (webhook -> set).
 */
import { testRedis } from '../utils/workflows-fixtures';
import { load, measureRuns, report, startApp, startHelloServer } from './lib/bench-kit';

const CONNECTIONS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 5000);
const SECRET = 'sk-bench-secret-0123456789';

const searchWorkflow = (upstreamUrl: string) => ({
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    {
      id: 'search',
      type: 'http-request',
      parameters: {
        method: 'POST',
        url: '${variables.baseUrl}/hello',
        headers: '{"x-api-key": variables.apiKey}',
        body: '{"text": input.query, "top_k": "5"}',
      },
      parameterMode: { url: 'expression', headers: 'expression', body: 'expression' },
    },
  ],
  edges: [{ from: 'trigger', to: 'search' }],
  variables: [
    { name: 'baseUrl', type: 'string', value: upstreamUrl },
    { name: 'apiKey', type: 'secret', value: SECRET },
  ],
});

async function measure(label: string, upstreamUrl: string, env: Record<string, string>) {
  const app = await startApp({
    APP_ROLE: 'all',
    FETCH_ALLOWED_HOSTS: '127.0.0.1',
    JOB_CONCURRENCY: '64',
    SWAGGER_ENABLED: 'false',
    ...env,
  });
  try {
    return await measureRuns(
      app.url,
      label,
      searchWorkflow(upstreamUrl),
      { query: 'what is a vector', collection: 'col_1' },
      { runs: RUNS, connections: CONNECTIONS },
    );
  } finally {
    await app.stop();
  }
}

async function main() {
  const upstream = await startHelloServer();
  const redis = await testRedis('bench-runs');
  if (!redis) throw new Error('this bench needs Redis on 127.0.0.1:6379 (or REDIS_TEST_URL)');
  try {
    const body = JSON.stringify({ text: 'what is a vector', top_k: '5' });
    const baseline = await load({
      url: upstream.url,
      path: '/hello',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: CONNECTIONS,
      durationMs: 5000,
      warmupMs: 1000,
    });
    console.log(`bare fastify POST: ${baseline.rps.toFixed(0)} req/s`);

    const embedded = await measure('embedded queue', upstream.url, {});
    const bull = await measure('Bull on Redis', upstream.url, { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix });

    for (const [name, m] of [
      ['embedded', embedded],
      ['bull', bull],
    ] as const) {
      if (m.failed) throw new Error(`${name}: ${m.failed} runs failed`);
      report({
        bench: 'runs-throughput',
        metric: `completed_runs_per_s_${name}`,
        value: m.runsPerSecond,
        unit: 'runs/s',
        baseline: baseline.rps,
        ratio: m.runsPerSecond / baseline.rps,
        target: '>= 500 runs/s',
      });
      report({
        bench: 'runs-throughput',
        metric: `accept_to_finish_p50_${name}`,
        value: m.p50Ms,
        unit: 'ms',
        baseline: null,
        ratio: null,
        target: 'informational (n8n 2.8.4 here: p50 570 ms)',
      });
    }
  } finally {
    await redis.cleanup();
    await upstream.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
