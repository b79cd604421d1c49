/**
 * (a) Webhook accept rate: POST /api/v1/workflows/:id/runs (API key check, role check, run
 * written as queued, job added to Bull on Redis, 202) at 50 connections, against a bare Fastify
 * hello-world POST route, same load tool, same machine, loopback. The API runs as APP_ROLE=api, as
 * it would in the scale-out shape: workers elsewhere consume the queue.
 * Targets: ratio >= 0.25, p99 <= 50 ms.
 */
import { testRedis } from '../utils/workflows-fixtures';
import { BENCH_KEY, call, load, report, startApp, startHelloServer } from './lib/bench-kit';

const CONNECTIONS = 50;
const DURATION_MS = 8000;
const WARMUP_MS = 1500;
const KEY = BENCH_KEY;

async function main() {
  const redis = await testRedis('bench-accept');
  if (!redis) throw new Error('this bench needs Redis on 127.0.0.1:6379 (or REDIS_TEST_URL)');

  const body = JSON.stringify({ input: { query: 'what is a vector', collection: 'col_1' } });
  const hello = await startHelloServer();
  const baseline = await load({
    url: hello.url,
    path: '/hello',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    durationMs: DURATION_MS,
    warmupMs: WARMUP_MS,
  });
  await hello.stop();

  const app = await startApp({ APP_ROLE: 'api', REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix, SWAGGER_ENABLED: 'false' });
  let measured: Awaited<ReturnType<typeof load>>;
  let queued: number;
  try {
    const workflow = await call(app.url, 'POST', '/api/v1/workflows', {
      name: 'bench',
      definition: {
        nodes: [
          { id: 'trigger', type: 'webhook-trigger', parameters: {} },
          {
            id: 'call',
            type: 'http-request',
            parameters: { method: 'POST', url: 'https://example.com/${input.collection}', body: '{"text": input.query}' },
            parameterMode: { url: 'expression', body: 'expression' },
          },
        ],
        edges: [{ from: 'trigger', to: 'call' }],
      },
    });
    await call(app.url, 'POST', `/api/v1/workflows/${workflow.id}/publish`);
    measured = await load({
      url: app.url,
      path: `/api/v1/workflows/${workflow.id}/runs`,
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body,
      connections: CONNECTIONS,
      durationMs: DURATION_MS,
      warmupMs: WARMUP_MS,
    });
    queued = await redis.count('workflow.run', 'wait');
  } finally {
    await app.stop();
    await redis.cleanup();
  }

  if (measured.statuses[202] !== measured.requests) throw new Error(`unexpected statuses ${JSON.stringify(measured.statuses)}`);
  console.log(
    `bare fastify POST: ${baseline.rps.toFixed(0)} req/s (p50 ${baseline.p50Ms.toFixed(2)} ms, p99 ${baseline.p99Ms.toFixed(2)} ms)`,
  );
  console.log(
    `webhook accept (Bull): ${measured.rps.toFixed(0)} req/s (p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${measured.p99Ms.toFixed(2)} ms); ${queued} jobs waiting in Bull at the end`,
  );
  report({
    bench: 'webhook-accept',
    metric: 'accept_rps_bull_50c',
    value: measured.rps,
    unit: 'req/s',
    baseline: baseline.rps,
    ratio: measured.rps / baseline.rps,
    target: 'ratio >= 0.25',
  });
  report({
    bench: 'webhook-accept',
    metric: 'accept_p99_bull_50c',
    value: measured.p99Ms,
    unit: 'ms',
    baseline: baseline.p99Ms,
    ratio: measured.p99Ms / baseline.p99Ms,
    target: '<= 50 ms',
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
