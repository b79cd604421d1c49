/**
 * Authenticated `GET /api/v1/collections/:id` on the real app (own process, embedded store)
 * against a bare Fastify hello-world route, same load tool, same machine, loopback.
 * Target: ratio >= 0.40.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { benchPort, load, report, startServer, tempDataDir } from './lib/bench-kit';

const CONNECTIONS = 32;
const DURATION_MS = 8000;
const KEY = 'wcs_bench_bootstrap_key_0123456789';
const root = join(__dirname, '..', '..');

async function main() {
  execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit' });

  const hello = await startServer([join(__dirname, 'lib', 'hello-server.js')], {}, benchPort());
  const baseline = await load({ url: hello.url, path: '/hello', connections: CONNECTIONS, durationMs: DURATION_MS, warmupMs: 1000 });
  await hello.stop();

  const app = await startServer(['--no-node-snapshot', join(root, 'dist', 'src', 'main.js')], { DATA_DIR: tempDataDir(), BOOTSTRAP_API_KEY: KEY, LOG_LEVEL: 'warn' }, benchPort());
  const created = await fetch(`${app.url}/api/v1/collections`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const { id } = (await created.json()) as { id: string };
  const measured = await load({ url: app.url, path: `/api/v1/collections/${id}`, headers: { 'x-api-key': KEY }, connections: CONNECTIONS, durationMs: DURATION_MS, warmupMs: 1000 });
  await app.stop();

  if (measured.statuses[200] !== measured.requests) throw new Error(`unexpected statuses ${JSON.stringify(measured.statuses)}`);
  console.log(`bare fastify: ${baseline.rps.toFixed(0)} req/s (p50 ${baseline.p50Ms.toFixed(2)} ms, p99 ${baseline.p99Ms.toFixed(2)} ms)`);
  console.log(`GET /api/v1/collections/:id: ${measured.rps.toFixed(0)} req/s (p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${measured.p99Ms.toFixed(2)} ms)`);
  report({ bench: 'http-overhead', metric: 'get_collection_rps', value: measured.rps, unit: 'req/s', baseline: baseline.rps, ratio: measured.rps / baseline.rps, target: 'ratio >= 0.40' });
  report({ bench: 'http-overhead', metric: 'get_collection_p99', value: measured.p99Ms, unit: 'ms', baseline: baseline.p99Ms, ratio: measured.p99Ms / baseline.p99Ms, target: 'informational' });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
