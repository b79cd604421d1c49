/**
 * Authenticated `GET /api/v1/collections/:id` on the real app (own process, embedded store)
 * against a bare Fastify hello-world route, same load tool, same machine, loopback.
 * Target: ratio >= 0.40.
 */
import { BENCH_KEY, call, load, report, startApp, startHelloServer } from './lib/bench-kit';

const CONNECTIONS = 32;
const DURATION_MS = 8000;
const KEY = BENCH_KEY;

async function main() {
  const hello = await startHelloServer();
  const baseline = await load({ url: hello.url, path: '/hello', connections: CONNECTIONS, durationMs: DURATION_MS, warmupMs: 1000 });
  await hello.stop();

  const app = await startApp();
  const { id } = await call(app.url, 'POST', '/api/v1/collections', { name: 'bench' });
  const measured = await load({
    url: app.url,
    path: `/api/v1/collections/${id}`,
    headers: { 'x-api-key': KEY },
    connections: CONNECTIONS,
    durationMs: DURATION_MS,
    warmupMs: 1000,
  });
  await app.stop();

  if (measured.statuses[200] !== measured.requests) throw new Error(`unexpected statuses ${JSON.stringify(measured.statuses)}`);
  console.log(`bare fastify: ${baseline.rps.toFixed(0)} req/s (p50 ${baseline.p50Ms.toFixed(2)} ms, p99 ${baseline.p99Ms.toFixed(2)} ms)`);
  console.log(
    `GET /api/v1/collections/:id: ${measured.rps.toFixed(0)} req/s (p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${measured.p99Ms.toFixed(2)} ms)`,
  );
  report({
    bench: 'http-overhead',
    metric: 'get_collection_rps',
    value: measured.rps,
    unit: 'req/s',
    baseline: baseline.rps,
    ratio: measured.rps / baseline.rps,
    target: 'ratio >= 0.40',
  });
  report({
    bench: 'http-overhead',
    metric: 'get_collection_p99',
    value: measured.p99Ms,
    unit: 'ms',
    baseline: baseline.p99Ms,
    ratio: measured.p99Ms / baseline.p99Ms,
    target: 'informational',
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
