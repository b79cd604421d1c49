import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { bothQueues } from '../utils/queues';
import { bootService, freePort, Spawned, stopService, tempDir } from '../utils/processes';

const root = join(__dirname, '..', '..');
const KEY = 'wcs_kill_bootstrap_key_0123456789abcdef';
/** Kills per queue: 50 in all over the two queues. */
const KILLS = Number(process.env.KILLS_PER_QUEUE ?? 25);
/** Runs started before each kill. */
const RUNS_PER_KILL = 3;
const NODES = ['n2', 'n3', 'n4'] as const;
type NodeId = (typeof NODES)[number];

/**
 * Where a kill lands: when the test server receives a node's request (the node is running: for n3,
 * the POST, "the instant it sends its request"), right after it answered one (the node is finishing
 * and its completion may or may not be stored yet), or after a random delay once the runs are in.
 */
type KillMode = { at: 'receive' | 'answered'; node: NodeId; delayMs: number } | { at: 'timer'; delayMs: number };

interface Received {
  node: NodeId;
  method: string;
}

interface KillRecord {
  mode: KillMode;
  /** The run whose request set the kill off (receive and answered modes). */
  tag: string | null;
}

/** A small seeded generator, so a failure can be replayed with KILL_SEED. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The server the workflow calls: it counts each node's requests per run (the run's tag is in the
 * path), and kills the service from inside its handler when the kill armed for this round says so.
 * Requests of the round's runs to the first node wait until the round is armed, so the kill always
 * finds them on their way. Bound to 127.0.0.1, bounded in requests.
 */
class CountingServer {
  readonly byTag = new Map<string, Received[]>();
  private server!: Server;
  private total = 0;
  private armed: { mode: KillMode; tags: Set<string>; fire: (tag: string | null) => void } | null = null;
  private gate: { tags: Set<string>; open: Promise<void>; release: () => void } | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next round's runs: their first node waits at the gate until `arm`. */
  hold(tags: Set<string>): void {
    let release!: () => void;
    const open = new Promise<void>((resolve) => (release = resolve));
    this.gate = { tags, open, release };
  }

  /** Arms the round's kill and opens the gate; `fire` kills the service. */
  arm(mode: KillMode, tags: Set<string>, fire: (tag: string | null) => void): void {
    this.armed = { mode, tags, fire };
    if (mode.at === 'receive' && mode.node === 'n2') {
      // Its runs' first requests may be waiting at the gate already: those nodes are running.
      const waiting = [...tags].find((tag) => this.byTag.get(tag)?.some((r) => r.node === 'n2'));
      if (waiting) this.trigger(waiting);
    }
    if (mode.at === 'timer') setTimeout(() => this.trigger(null), mode.delayMs);
    this.gate?.release();
    this.gate = null;
  }

  async close(): Promise<void> {
    this.gate?.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private trigger(tag: string | null): void {
    const armed = this.armed;
    if (!armed) return;
    this.armed = null;
    armed.fire(tag);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => undefined);
    req.on('error', () => undefined);
    const match = /^\/(n2|n3|n4)\/([\w-]+)$/.exec(req.url ?? '');
    if (!match || ++this.total > 5000) {
      res.writeHead(404).end();
      return;
    }
    const [, node, tag] = match as unknown as [string, NodeId, string];
    for await (const _chunk of req) {
      // The body is not needed; read to the end so the answer goes out normally.
    }
    const seen = this.byTag.get(tag) ?? [];
    seen.push({ node, method: req.method ?? '' });
    this.byTag.set(tag, seen);
    const mode = this.armed?.mode;
    const ours = this.armed?.tags.has(tag);
    if (ours && mode?.at === 'receive' && mode.node === node) {
      // The node has sent its request and waits for the answer: the process dies now.
      this.trigger(tag);
      res.destroy();
      return;
    }
    if (node === 'n2' && this.gate?.tags.has(tag)) await this.gate.open;
    if (ours && mode?.at === 'answered' && mode.node === node) {
      res.on('finish', () => setTimeout(() => this.trigger(tag), mode.delayMs));
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ node, tag }));
  }
}

interface RunRecord {
  id: string;
  status: string;
  error: { code: string; nodeId?: string } | null;
  steps: Array<{ nodeId: string; status: string; error?: { code: string } | null }>;
}

/**
 * SIGKILL at random instants while runs of trigger -> GET -> POST -> GET go on, then a restart:
 * a node whose completion was stored is never run again nor failed as interrupted (its successor's
 * request reaching the server proves it was stored: it is written before the successor starts),
 * the POST is never sent twice for one run, and every run ends `succeeded`, or `failed` with
 * `INTERRUPTED` at the POST when the POST was running when the process died (it is not sent again:
 * the server may have had it).
 */
describe.each(bothQueues('kill'))('runs killed at random instants: $name', (queue) => {
  let service: Spawned | undefined;
  let counting: CountingServer;
  let dataDir: string;
  let port: number;
  let env: Record<string, string>;
  const seed = Number(process.env.KILL_SEED ?? Date.now() % 1_000_000);
  const rand = random(seed);

  beforeAll(async () => {
    // Builds dist/ when it is older than the sources, as `npm start` does.
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    env = await queue.env();
    counting = new CountingServer();
    await counting.start();
    dataDir = tempDir('kill');
    port = await freePort();
  }, 240_000);

  afterAll(async () => {
    await stopService(service);
    await counting?.close();
    await queue.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const url = () => `http://127.0.0.1:${port}`;
  const boot = (): Promise<Spawned> =>
    bootService(port, {
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: KEY,
      FETCH_ALLOWED_HOSTS: '127.0.0.1',
      EMBEDDING_THREADS: '1',
      // A killed worker's runs are taken over about this long after its last renewal.
      JOB_LEASE_MS: '3000',
      REDIS_URL: '',
      ...env,
    });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url() + path, {
      method,
      headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const terminal = async (runId: string): Promise<RunRecord> => {
    for (const deadline = Date.now() + 180_000; ; await new Promise((r) => setTimeout(r, 250))) {
      const run = await call('GET', `/api/v1/runs/${runId}`);
      if (run.status === 200 && ['succeeded', 'failed', 'canceled'].includes(run.body.status)) return run.body as RunRecord;
      if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run.body?.status} after 180 s:\n${service?.output()}`);
    }
  };
  /**
   * Starts a run as a caller should: a 503 says no run was started (a service just restarted on a
   * machine at load 20 may not get its job queued within RUNS_ENQUEUE_TIMEOUT_MS), so the caller
   * tries again after its Retry-After, a few times.
   */
  const start = async (workflowId: string, tag: string): Promise<string> => {
    for (let attempt = 1; ; attempt++) {
      const started = await call('POST', `/api/v1/workflows/${workflowId}/runs`, { input: { tag } });
      if (started.status === 503 && started.body?.details?.reason === 'queue-unavailable' && attempt < 5) {
        await new Promise((r) => setTimeout(r, 1000 * (started.body?.details?.retryAfterSeconds ?? 1)));
        continue;
      }
      expect(started.status).toBe(202);
      return started.body.runId as string;
    }
  };
  const killMode = (round: number): KillMode => {
    // Every kind of instant in turn, each with its own random delay: the POST's request and the
    // GET after it (the instants of the report) come up every seventh kill.
    const kinds: Array<KillMode['at'] | `${'receive' | 'answered'}:${NodeId}`> = [
      'receive:n3',
      'receive:n4',
      'answered:n3',
      'timer',
      'receive:n2',
      'answered:n2',
      'answered:n4',
    ];
    const kind = kinds[round % kinds.length];
    if (kind === 'timer') return { at: 'timer', delayMs: Math.floor(rand() * 600) };
    const [at, node] = kind.split(':') as ['receive' | 'answered', NodeId];
    return { at, node, delayMs: Math.floor(rand() * 25) };
  };

  it(`keeps every finished node done over ${KILLS} kills (POST sent at most once per run, every run terminal)`, async () => {
    service = await boot();
    const node = (id: NodeId, method: string) => ({
      id,
      type: 'http-request',
      parameters: { method, url: `${counting.url}/${id}/\${nodes.trigger.tag}`, ...(method === 'POST' ? { body: '{}' } : {}) },
      parameterMode: { url: 'expression' },
    });
    const created = await call('POST', '/api/v1/workflows', {
      name: 'killed',
      definition: {
        nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, node('n2', 'GET'), node('n3', 'POST'), node('n4', 'GET')],
        edges: [
          { from: 'trigger', to: 'n2' },
          { from: 'n2', to: 'n3' },
          { from: 'n3', to: 'n4' },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect((await call('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);

    const runIdOf = new Map<string, string>();
    const rounds: string[][] = [];
    const kills: KillRecord[] = [];
    for (let round = 0; round < KILLS; round++) {
      if (!service) service = await boot();
      // Runs of two rounds back are over before the next kill: no run loses its worker more than
      // twice (a third loss gives it up, by design, as UNAVAILABLE).
      for (const tag of rounds[round - 2] ?? []) await terminal(runIdOf.get(tag)!);
      const tags = new Set(Array.from({ length: RUNS_PER_KILL }, () => randomUUID()));
      counting.hold(tags);
      for (const tag of tags) runIdOf.set(tag, await start(created.body.id, tag));
      rounds.push([...tags]);
      const mode = killMode(round);
      const victim = service;
      const killed = new Promise<string | null>((resolve) => {
        counting.arm(mode, tags, (tag) => {
          // Every process of the service dies at this instant, the worker process running the node
          // included (alone, it would see the test server close the request and fail the node).
          victim.killAll('SIGKILL');
          resolve(tag);
        });
      });
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`kill ${round} (${JSON.stringify(mode)}) never came: its runs did not get there in 120 s\n${victim.output()}`),
            ),
          120_000,
        );
      });
      const tag = await Promise.race([killed, stuck]).finally(() => clearTimeout(timer));
      expect(await victim.exited(60_000)).toEqual({ code: null, signal: 'SIGKILL' });
      kills.push({ mode, tag });
      service = undefined;
    }

    service = await boot();
    const records = new Map<string, RunRecord>();
    for (const [tag, runId] of runIdOf) records.set(tag, await terminal(runId));

    const problems: string[] = [];
    const outcomes = { succeeded: 0, interruptedAtPost: 0 };
    for (const [tag, run] of records) {
      const seen = counting.byTag.get(tag) ?? [];
      const count = (n: NodeId) => seen.filter((r) => r.node === n).length;
      const step = (n: string) => run.steps.find((s) => s.nodeId === n);
      const say = (what: string) =>
        problems.push(
          `run ${run.id} (${tag}): ${what}; requests ${seen.map((r) => r.node).join(',')}; status ${run.status} ${JSON.stringify(run.error)}; steps ${JSON.stringify(run.steps.map((s) => [s.nodeId, s.status, s.error?.code]))}`,
        );
      if (count('n3') > 1) say('the POST was sent twice');
      // A node's request after its successor's means it ran again after the successor started, i.e. after it was stored as finished.
      const order = seen.map((r) => NODES.indexOf(r.node));
      if (order.some((n, i) => i > 0 && n < order[i - 1])) say('a finished node ran again');
      const interrupted = run.steps.filter((s) => s.error?.code === 'INTERRUPTED').map((s) => s.nodeId);
      if (run.status === 'succeeded') {
        outcomes.succeeded++;
        if (count('n3') !== 1 || count('n4') < 1) say('a succeeded run did not send its requests');
        for (const n of NODES) if (step(n)?.status !== 'succeeded') say(`node ${n} is not succeeded`);
      } else if (run.status === 'failed' && run.error?.code === 'INTERRUPTED' && run.error.nodeId === 'n3') {
        outcomes.interruptedAtPost++;
        // Interrupted only while it was running: had it finished (stored), n4 would have started.
        if (count('n4') > 0) say('the POST is failed as interrupted although the node after it started');
        if (step('n2')?.status !== 'succeeded' || step('n3')?.status !== 'failed') say('the steps do not show n2 done and n3 interrupted');
      } else {
        say('the run did not end succeeded, or failed INTERRUPTED at the POST');
      }
      if (interrupted.some((n) => n !== 'n3')) say(`node(s) ${interrupted.join(',')} marked interrupted`);
    }
    // The instants of the report, exactly: each such kill has one outcome.
    for (const { mode, tag } of kills) {
      if (mode.at !== 'receive' || !tag) continue;
      const run = records.get(tag)!;
      const seen = (counting.byTag.get(tag) ?? []).map((r) => r.node);
      if (mode.node === 'n3' && !(run.status === 'failed' && run.error?.nodeId === 'n3' && seen.filter((n) => n === 'n2').length === 1)) {
        problems.push(
          `killed as run ${run.id} sent its POST: expected n2 kept and the POST failed INTERRUPTED, got ${run.status} ${JSON.stringify(run.error)} after ${seen.join(',')}`,
        );
      }
      if (
        mode.node === 'n4' &&
        !(run.status === 'succeeded' && seen.filter((n) => n === 'n3').length === 1 && seen.filter((n) => n === 'n2').length === 1)
      ) {
        problems.push(
          `killed as run ${run.id} sent its last GET: expected n2 and the POST kept and the run succeeded, got ${run.status} ${JSON.stringify(run.error)} after ${seen.join(',')}`,
        );
      }
    }
    const byMode = kills.reduce<Record<string, number>>((acc, { mode }) => {
      const key = mode.at === 'timer' ? 'timer' : `${mode.at}:${mode.node}`;
      acc[key] = (acc[key] ?? 0) + 1;
      return acc;
    }, {});
    process.stdout.write(`${JSON.stringify({ queue: queue.name, seed, kills: kills.length, byMode, runs: records.size, ...outcomes })}\n`);
    expect(problems).toEqual([]);
    expect(kills).toHaveLength(KILLS);
    expect(outcomes.succeeded + outcomes.interruptedAtPost).toBe(KILLS * RUNS_PER_KILL);
  }, 900_000);
});
