/**
 * The remote MCP server against the REST door it shares its services with, on the real app in its
 * own process (embedded store), same load shape, same machine, loopback:
 *
 * 1. `service_get_collection` tool calls/s vs authenticated `GET /api/v1/collections/:id`, for each
 *    protocol era: a 2025 client in a session (one per connection) and 2026-07-28 stateless requests
 *    (the `_meta` envelope and standard headers on each), raw JSON-RPC so the client's own cost stays
 *    out. Every answer of both doors is read whole and checked, on pools kept across the rounds. The
 *    doors take turns in short rounds; each figure is the median round, each ratio the median of the
 *    rounds' ratios (an MCP round against the REST round just before it). Target: each ratio >= 0.8.
 * 2. RSS of a fresh app process before and after opening and closing 10,000 2025 sessions (initialize,
 *    initialized, DELETE; 50 at a time), each after a full GC asked of the server through its
 *    inspector. Target: back within 10% of where it started.
 * 3. Informational: heap per open, idle 2025 session (2,000 held at once). A 2026-07-28 client holds none.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Pool, WebSocket } from 'undici';
import { BENCH_KEY, BENCH_WORDS, benchPort, call, cpuMicros, median, percentile, report, rssBytes, startApp } from './lib/bench-kit';

const CONNECTIONS = 32;
const DURATION_MS = 10_000;
const ROUNDS = 8;
const WARMUP_MS = 2000;
const WARMUP_SESSIONS = 10_000;
const CYCLED_SESSIONS = 10_000;
const CYCLE_CONCURRENCY = 50;
const HELD_SESSIONS = 2000;
const KEY = BENCH_KEY;
const PROTOCOL_VERSION = '2025-06-18';

const mcpHeaders = (key: string) => ({
  authorization: `Bearer ${key}`,
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': PROTOCOL_VERSION,
});
const MCP_HEADERS = mcpHeaders(KEY);

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } },
});
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

const mb = (bytes: number) => bytes / (1024 * 1024);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function openSession(pool: Pool, headers = MCP_HEADERS): Promise<string> {
  const res = await pool.request({ path: '/mcp', method: 'POST', headers, body: INITIALIZE });
  const body = await res.body.text();
  const sessionId = res.headers['mcp-session-id'];
  if (res.statusCode !== 200 || typeof sessionId !== 'string') throw new Error(`initialize: ${res.statusCode} ${body}`);
  const initialized = await pool.request({
    path: '/mcp',
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': sessionId },
    body: INITIALIZED,
  });
  await initialized.body.dump();
  if (initialized.statusCode !== 202) throw new Error(`initialized: ${initialized.statusCode}`);
  return sessionId;
}

async function closeSession(pool: Pool, sessionId: string, headers = MCP_HEADERS): Promise<void> {
  const res = await pool.request({ path: '/mcp', method: 'DELETE', headers: { ...headers, 'mcp-session-id': sessionId } });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`DELETE session: ${res.statusCode}`);
}

/** One closed-loop round of `send` on every connection: successful calls per second and their latencies. */
async function closedLoop(connections: number, durationMs: number, send: (connection: number) => Promise<boolean>) {
  const latencies: number[] = [];
  let failures = 0;
  const deadline = performance.now() + durationMs;
  const worker = async (connection: number) => {
    while (performance.now() < deadline) {
      const start = performance.now();
      if (await send(connection)) latencies.push(performance.now() - start);
      else failures++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, (_, i) => worker(i)));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    failures,
    rps: latencies.length / elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

/** A tools/call body with its own id; the rest of it is written once (the load generator's cost stays out). */
function toolCalls(tool: string, args: Record<string, unknown>, meta?: Record<string, unknown>): (id: number) => string {
  const params = { name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) };
  const tail = `,"method":"tools/call","params":${JSON.stringify(params)}}`;
  return (id) => `{"jsonrpc":"2.0","id":${id}${tail}`;
}
let answers = 0;
/**
 * Read whole and checked, as the REST answers are: a result, not a tool error (a run's answer is one
 * unless it succeeded); one in 64 is parsed too, so an answer that is not JSON fails the bench.
 */
const answered = (status: number, text: string) =>
  status === 200 &&
  text.includes('"structuredContent"') &&
  !text.includes('"isError":true') &&
  (answers++ % 64 !== 0 || (JSON.parse(sseData(text)) as { result?: unknown }).result !== undefined);
/** The JSON of an answer: the body, or the data of the one event a 2025 session's stream carries (the SDK's way). */
const sseData = (text: string) =>
  text.startsWith('{')
    ? text
    : text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
        .join('\n');

/**
 * One operation both doors offer: the REST request and the tool call that does the same, each
 * answer read whole and checked.
 */
interface Operation {
  /** The metric's stem; the 2026-07-28 figure adds `_2026`. */
  metric: string;
  rest: { label: string; method: 'GET' | 'POST'; path: string; body?: string; check(status: number, text: string): boolean };
  tool: { name: string; args: Record<string, unknown> };
}

/** REST: closed-loop requests on a pool kept across rounds, each answer read whole and checked. */
function restLoader(url: string, op: Operation) {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  const { method, path, body, check } = op.rest;
  const headers = { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  const run = (durationMs: number) =>
    closedLoop(CONNECTIONS, durationMs, async () => {
      const res = await pool.request({ path, method, headers, body });
      return check(res.statusCode, await res.body.text());
    });
  return { run, close: () => pool.close() };
}

/** 2025 clients: closed-loop tool calls, one session per connection, like bench-kit's load() for REST. */
async function sessionToolLoader(url: string, op: Operation) {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  const sessions = await Promise.all(Array.from({ length: CONNECTIONS }, () => openSession(pool)));
  const headers = sessions.map((sessionId) => ({ ...MCP_HEADERS, 'mcp-session-id': sessionId }));
  const body = toolCalls(op.tool.name, op.tool.args);
  let nextId = 1;
  const run = (durationMs: number) =>
    closedLoop(CONNECTIONS, durationMs, async (connection) => {
      const res = await pool.request({ path: '/mcp', method: 'POST', headers: headers[connection], body: body(nextId++) });
      return answered(res.statusCode, await res.body.text());
    });
  const close = async () => {
    await Promise.all(sessions.map((id) => closeSession(pool, id)));
    await pool.close();
  };
  return { run, close };
}

const MODERN_REVISION = '2026-07-28';
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
};

/** 2026-07-28 clients: closed-loop stateless tool calls, each carrying its envelope and the standard headers. */
async function statelessToolLoader(url: string, op: Operation) {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  const headers = {
    authorization: `Bearer ${KEY}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': MODERN_REVISION,
    'mcp-method': 'tools/call',
    'mcp-name': op.tool.name,
  };
  const body = toolCalls(op.tool.name, op.tool.args, MODERN_META);
  let nextId = 1;
  const run = (durationMs: number) =>
    closedLoop(CONNECTIONS, durationMs, async () => {
      const res = await pool.request({ path: '/mcp', method: 'POST', headers, body: body(nextId++) });
      return answered(res.statusCode, await res.body.text());
    });
  return { run, close: () => pool.close() };
}

interface Round {
  requests: number;
  rps: number;
  p99Ms: number;
}

/**
 * The median round's requests/s and p99. Medians, because a round the shared machine stalls
 * (another process's burst) is an outlier on whichever side it falls, not a property of either door.
 */
const combine = (rounds: Round[]) => ({ rps: median(rounds.map((r) => r.rps)), p99Ms: median(rounds.map((r) => r.p99Ms)) });

async function cycleSessions(url: string, count: number, headers = MCP_HEADERS): Promise<void> {
  const pool = new Pool(url, { connections: CYCLE_CONCURRENCY, pipelining: 1 });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await closeSession(pool, await openSession(pool, headers), headers);
    }
  };
  await Promise.all(Array.from({ length: CYCLE_CONCURRENCY }, worker));
  await pool.close();
}

const BOUNDARY = 'bench-mcp-boundary';

/** A collection holding one small indexed text file, for the searches (embedded by the bench's embeddings endpoint). */
async function searchableCollection(url: string): Promise<string> {
  const { id } = await call(url, 'POST', '/api/v1/collections', { name: 'bench search' });
  const text = Array.from({ length: 40 }, (_, p) => `f1 p${p} ${BENCH_WORDS.slice(p % 10, (p % 10) + 30).join(' ')}.`).join('\n\n');
  const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="one.txt"\r\nContent-Type: text/plain\r\n\r\n${text}\r\n--${BOUNDARY}--\r\n`;
  const res = await fetch(`${url}/api/v1/collections/${id}/files/upload`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body,
  });
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
  for (;;) {
    const { files } = await call(url, 'GET', `/api/v1/collections/${id}/stats`);
    if (files.error > 0) throw new Error('the search file failed to index');
    if (files.indexed >= 1) return id;
    await sleep(200);
  }
}

/** An MCP trigger asking for a question and a Respond node answering it: the smallest run a workflow tool starts. */
const ECHO_WORKFLOW = {
  nodes: [
    {
      id: 'ask',
      type: 'mcp-trigger',
      parameters: {
        toolName: 'bench_echo',
        description: 'Echoes the question back.',
        inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'], additionalProperties: false },
      },
    },
    { id: 'answer', type: 'respond', parameters: {} },
  ],
  edges: [{ from: 'ask', to: 'answer' }],
};

/** The operations compared: MCP_BENCH_OPS=get,search,run (default all) picks some. */
async function operations(url: string): Promise<Operation[]> {
  const wanted = (process.env.MCP_BENCH_OPS ?? 'get,search,run').split(',');
  const ops: Operation[] = [];
  if (wanted.includes('get')) {
    const { id } = await call(url, 'POST', '/api/v1/collections', { name: 'bench' });
    ops.push({
      metric: 'get_collection_tool_calls',
      rest: {
        label: 'GET /api/v1/collections/:id',
        method: 'GET',
        path: `/api/v1/collections/${id}`,
        check: (s, t) => s === 200 && t.includes(id),
      },
      tool: { name: 'service_get_collection', args: { collection_id: id } },
    });
  }
  if (wanted.includes('search')) {
    const id = await searchableCollection(url);
    const query = 'q f1 p3 what does the third passage say';
    ops.push({
      metric: 'search_tool_calls',
      rest: {
        label: 'POST /api/v1/collections/:id/search',
        method: 'POST',
        path: `/api/v1/collections/${id}/search`,
        body: JSON.stringify({ text: query, top_k: 10 }),
        check: (s, t) => s === 200 && t.includes('"distance"'),
      },
      tool: { name: 'service_search_collection', args: { collection_id: id, query } },
    });
  }
  if (wanted.includes('run')) {
    const { id } = await call(url, 'POST', '/api/v1/workflows', { name: 'Bench echo', definition: ECHO_WORKFLOW });
    await call(url, 'POST', `/api/v1/workflows/${id}/publish`);
    const input = { question: 'How far is the moon?' };
    ops.push({
      metric: 'run_tool_calls',
      // The tool call answers once the run ended, with its output: the webhook with ?wait= does the same.
      rest: {
        label: 'POST /api/v1/workflows/:id/runs?wait=30',
        method: 'POST',
        path: `/api/v1/workflows/${id}/runs?wait=30`,
        body: JSON.stringify({ input }),
        check: (s, t) => s === 200 && t.includes('"succeeded"') && t.includes('moon'),
      },
      tool: { name: 'bench_echo', args: input },
    });
  }
  return ops;
}

/**
 * REST and MCP (both eras) in alternating rounds rather than one after the other, so a change in the
 * machine's load (it is shared) weighs on every side of the ratios alike.
 */
async function compare(url: string, pid: number, op: Operation): Promise<void> {
  const rest = restLoader(url, op);
  const eras = [
    { era: '2025-11-25 session', metric: op.metric, loader: await sessionToolLoader(url, op) },
    { era: '2026-07-28 stateless', metric: `${op.metric}_2026`, loader: await statelessToolLoader(url, op) },
  ];
  await rest.run(WARMUP_MS);
  for (const { loader } of eras) await loader.run(WARMUP_MS);
  const restRounds: Round[] = [];
  const eraRounds: Round[][] = eras.map(() => []);
  const serverCpu = { rest: 0, eras: eras.map(() => 0) };
  for (let round = 0; round < ROUNDS; round++) {
    let cpu = cpuMicros(pid);
    const round = await rest.run(DURATION_MS / ROUNDS);
    if (round.failures) throw new Error(`${op.rest.label}: ${round.failures} failed requests`);
    serverCpu.rest += cpuMicros(pid) - cpu;
    restRounds.push(round);
    for (const [i, { era, loader }] of eras.entries()) {
      cpu = cpuMicros(pid);
      const mcp = await loader.run(DURATION_MS / ROUNDS);
      if (mcp.failures) throw new Error(`MCP ${op.tool.name} ${era}: ${mcp.failures} failed tool calls`);
      serverCpu.eras[i] += cpuMicros(pid) - cpu;
      eraRounds[i].push(mcp);
    }
  }
  for (const { loader } of [...eras, { loader: rest }]) await loader.close();
  const restFigures = combine(restRounds);
  const cpuPerRest = serverCpu.rest / restRounds.reduce((sum, r) => sum + r.requests, 0);
  console.log(
    `${op.rest.label}: ${restFigures.rps.toFixed(0)} req/s (median p99 ${restFigures.p99Ms.toFixed(2)} ms, server CPU ${cpuPerRest.toFixed(1)} us/req)`,
  );
  for (const [i, { era, metric }] of eras.entries()) {
    const mcp = combine(eraRounds[i]);
    const cpuPerCall = serverCpu.eras[i] / eraRounds[i].reduce((sum, r) => sum + r.requests, 0);
    console.log(
      `${op.tool.name}, ${era}: ${mcp.rps.toFixed(0)} calls/s (median p99 ${mcp.p99Ms.toFixed(2)} ms, server CPU ${cpuPerCall.toFixed(1)} us/call); ` +
        `per round, MCP/REST: ${eraRounds[i].map((r, n) => (r.rps / restRounds[n].rps).toFixed(2)).join(' ')}`,
    );
    report({
      bench: 'mcp',
      metric,
      value: mcp.rps,
      unit: 'calls/s',
      baseline: restFigures.rps,
      // Each round of MCP against the REST round just before it, the median of those ratios.
      ratio: median(eraRounds[i].map((r, n) => r.rps / restRounds[n].rps)),
      target: 'ratio >= 0.8 (median of paired rounds)',
    });
    // The server's own CPU time per request: steadier than requests/s, which depends on how the two
    // cores are shared with the load generator.
    report({
      bench: 'mcp',
      metric: `${metric}_server_cpu`,
      value: cpuPerCall,
      unit: 'us/call',
      baseline: cpuPerRest,
      ratio: cpuPerCall / cpuPerRest,
      target: 'informational',
    });
    report({
      bench: 'mcp',
      metric: `${metric}_p99`,
      value: mcp.p99Ms,
      unit: 'ms',
      baseline: restFigures.p99Ms,
      ratio: mcp.p99Ms / restFigures.p99Ms,
      target: 'informational',
    });
  }
}

/** Every operation on one app, with the embeddings endpoint the searches need. */
async function throughput(): Promise<void> {
  const embeddings = await startEmbeddings();
  try {
    const app = await startApp(
      { EMBEDDINGS_URL: embeddings.url, EMBEDDINGS_MODEL: 'bench-clustered', EMBEDDINGS_API_KEY: '', FETCH_ALLOWED_HOSTS: '127.0.0.1' },
      (process.env.BENCH_APP_NODE_OPTIONS ?? '').split(' ').filter(Boolean),
      process.env.BENCH_APP_ROOT,
    );
    try {
      console.log(
        `load average ${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')}`,
      );
      for (const op of await operations(app.url)) await compare(app.url, app.child.pid!, op);
      console.log(
        `load average ${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')}`,
      );
    } finally {
      await app.stop();
    }
  } finally {
    embeddings.child.kill();
  }
}

/** The bench's OpenAI-compatible embeddings endpoint (lib/clustered-embeddings-server.ts), in its own process. */
function startEmbeddings(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-r', './scripts/swc-register.js', join(__dirname, 'lib', 'clustered-embeddings-server.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`embeddings server exited with ${code}`)));
    child.stdout!.once('data', (chunk: Buffer) => resolve({ url: `http://127.0.0.1:${chunk.toString().trim()}/v1`, child }));
  });
}

/**
 * A full, memory-reducing garbage collection in the server, through its inspector
 * (HeapProfiler.collectGarbage), then its RSS. Right after a burst, RSS still holds the burst's
 * garbage until V8's memory reducer happens to run (measured here: ~180-300 MB for 12-15 s, then
 * ~125 MB, or not within 20 s, depending on where the last GC fell), so a plain sample reads GC
 * timing, not what the sessions left behind. Before and after are measured the same way.
 */
async function rssAfterGc(inspectorPort: number, pid: number): Promise<number> {
  const [target] = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = () => socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    socket.onmessage = (event) => (JSON.parse(String(event.data)).id === 1 ? resolve(undefined) : undefined);
    socket.onerror = () => reject(new Error('inspector connection failed'));
  });
  socket.close();
  await sleep(1000);
  return rssBytes(pid);
}

/**
 * In a fresh process, so the throughput run's garbage does not inflate the starting point; warmed
 * with a first round of as many sessions, since a server that has just booted has not yet sized its
 * heap for that churn (the starting point is a server in service, not one that has never served).
 * heapPerSession shows the heap itself returning once sessions close.
 */
async function sessionMemory(): Promise<void> {
  const inspectorPort = benchPort();
  const app = await startApp({}, [`--inspect=127.0.0.1:${inspectorPort}`]);
  try {
    const pid = app.child.pid!;
    await cycleSessions(app.url, WARMUP_SESSIONS);
    const before = await rssAfterGc(inspectorPort, pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 100);
    const started = performance.now();
    await cycleSessions(app.url, CYCLED_SESSIONS);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const justAfter = rssBytes(pid);
    const after = await rssAfterGc(inspectorPort, pid);
    console.log(
      `${CYCLED_SESSIONS} sessions opened and closed in ${seconds.toFixed(1)} s (${(CYCLED_SESSIONS / seconds).toFixed(0)}/s): ` +
        `RSS ${mb(before).toFixed(1)} MB before, ${mb(peak).toFixed(1)} MB peak, ${mb(justAfter).toFixed(1)} MB just after, ${mb(after).toFixed(1)} MB after (both after a full GC)`,
    );
    report({
      bench: 'mcp',
      metric: 'rss_after_10000_sessions',
      value: mb(after),
      unit: 'MB',
      baseline: mb(before),
      ratio: after / before,
      target: 'ratio <= 1.10 (back within 10% of where it started; lower is fine)',
    });
  } finally {
    await app.stop();
  }
}

/**
 * Heap held per open, idle session, measured in this process where `gc()` can settle the heap
 * (scripts/bench.js runs benches with --expose-gc); RSS is too coarse for a few KB apiece.
 */
async function heapPerSession(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return console.log('heap per session: skipped (run with --expose-gc)');
  // Loaded here so the other figures do not pay for compiling the app in this process.
  const { BOOTSTRAP_KEY, startTestApp } = await import('../utils/test-app');
  const headers = mcpHeaders(BOOTSTRAP_KEY);
  const t = await startTestApp({ LOG_LEVEL: 'warn', MCP_MAX_SESSIONS_PER_USER: String(HELD_SESSIONS) });
  const pool = new Pool(t.url, { connections: CYCLE_CONCURRENCY, pipelining: 1 });
  try {
    await cycleSessions(t.url, 200, headers);
    const heap = () => (gc(), gc(), process.memoryUsage().heapUsed);
    const idle = heap();
    const held: string[] = [];
    while (held.length < HELD_SESSIONS)
      held.push(...(await Promise.all(Array.from({ length: CYCLE_CONCURRENCY }, () => openSession(pool, headers)))));
    const holding = heap();
    for (let i = 0; i < held.length; i += CYCLE_CONCURRENCY)
      await Promise.all(held.slice(i, i + CYCLE_CONCURRENCY).map((s) => closeSession(pool, s, headers)));
    const released = heap();
    const perSession = (holding - idle) / held.length;
    console.log(
      `${held.length} idle sessions held: heap ${mb(idle).toFixed(1)} -> ${mb(holding).toFixed(1)} MB (~${(perSession / 1024).toFixed(1)} KB each), ${mb(released).toFixed(1)} MB once closed`,
    );
    report({
      bench: 'mcp',
      metric: 'heap_per_open_session',
      value: perSession / 1024,
      unit: 'KB',
      baseline: null,
      ratio: null,
      target: 'informational',
    });
  } finally {
    await pool.close();
    await t.close();
  }
}

async function main() {
  // MCP_BENCH_ONLY=throughput or MCP_BENCH_ONLY=memory runs one half.
  const only = process.env.MCP_BENCH_ONLY;
  if (only !== 'memory') await throughput();
  if (only === 'throughput') return;
  await sessionMemory();
  await heapPerSession();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
