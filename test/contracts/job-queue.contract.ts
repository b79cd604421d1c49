import { Logger } from '@nestjs/common';
import Bull from 'bull';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { AppError, ErrorCode } from '../../src/common/app-error';
import pino from 'pino';
import { BullJobQueue, bullQueueOptions } from '../../src/jobs/bull/bull-job-queue.adapter';
import { EmbeddedJobQueue } from '../../src/jobs/embedded/embedded-job-queue.adapter';
import { MongoJobStore } from '../../src/jobs/mongo/mongo-job-store.adapter';
import { SqliteJobStore } from '../../src/jobs/embedded/sqlite-job-store.adapter';
import { JobContext, JobQueue } from '../../src/domain/job-queue.port';
import { JobStore } from '../../src/domain/job-store.port';
import { pick, storeBackends } from '../utils/store-backends';

/**
 * One suite for every JobQueue adapter: the embedded queue on each document store (SQLite always,
 * MongoDB when MONGODB_URI is set) and Bull on Redis (REDIS_URL, default 127.0.0.1:6379; required
 * in CI, skipped elsewhere when unreachable). Leases, locks and stall checks are shortened so the
 * crash tests finish in about a second; every wait is bounded.
 */

interface InstanceOptions {
  concurrency?: number;
}

const logger = pino({ level: 'silent' });

interface Harness {
  /** A new queue instance on the same backing store: creating a second one is a restart. */
  create(options?: InstanceOptions): JobQueue;
  /** Plays a worker that took the next job of `name` and died: nothing renews or settles its claim. */
  abandonNextJob(name: string): Promise<string | undefined>;
  /**
   * Leaves a job's data in the queue but in none of its lists, as a queue whose lists and job data
   * can drift apart may (Redis losing a write); absent where a job is one record (the embedded queue).
   */
  strandJob?(name: string, id: string): Promise<void>;
  /** Closes every instance and removes what the test stored. */
  dispose(): Promise<void>;
}

interface Backend {
  name: string;
  open(): Promise<Harness>;
}

// The poll interval is far beyond any wait below, so a job that runs at all was woken by its
// enqueue, its retry or delay timer, or its lease expiry, which is what the suite verifies.
const embeddedBackends: Backend[] = storeBackends.map((storage) => ({
  name: `embedded on ${storage.name}`,
  async open() {
    const handles = await storage.open();
    const newStore = (): JobStore =>
      pick<JobStore>(
        handles,
        (db) => new SqliteJobStore(db),
        (connection) => new MongoJobStore(connection),
      );
    const queues: JobQueue[] = [];
    return {
      create({ concurrency = 4 } = {}) {
        const queue = new EmbeddedJobQueue(newStore(), {
          concurrency,
          logger,
          leaseMs: 1000,
          pollIntervalMs: 60_000,
          shutdownGraceMs: 2000,
        });
        queues.push(queue);
        return queue;
      },
      async abandonNextJob(name) {
        const now = Date.now();
        const job = await newStore().claim(name, new Date(now), new Date(now + 300), 'worker-that-died');
        return job?.id;
      },
      async dispose() {
        await Promise.all(queues.map((queue) => queue.close()));
        await handles.close();
      },
    };
  },
}));

const redisUrl = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

const bullBackend: Backend = {
  name: 'bull on redis',
  async open() {
    const prefix = `wcs-test-${process.pid}-${randomBytes(4).toString('hex')}`;
    const queues: JobQueue[] = [];
    return {
      create({ concurrency = 4 } = {}) {
        // Each instance owns its Bull queues, as each process does through BullModule.registerQueue.
        const options = bullQueueOptions({ redisUrl, prefix, lockDurationMs: 1000, stalledIntervalMs: 250 });
        const queue = new BullJobQueue((name) => new Bull(name, options), { concurrency, logger, shutdownGraceMs: 2000 });
        queues.push(queue);
        return queue;
      },
      async abandonNextJob(name) {
        // getNextJob() locks the job like a worker does but never starts the lock renewal, and
        // closing drops the connection: exactly what a killed worker leaves behind.
        const worker = new Bull(name, redisUrl, { prefix, settings: { lockDuration: 500 } });
        try {
          const job = await worker.getNextJob();
          return job ? String(job.id) : undefined;
        } finally {
          await worker.close();
        }
      },
      async strandJob(name, id) {
        const admin = new Bull(name, redisUrl, { prefix });
        try {
          for (const list of ['wait', 'paused', 'active']) await admin.client.lrem(`${prefix}:${name}:${list}`, 0, id);
          for (const set of ['delayed', 'completed', 'failed', 'priority']) await admin.client.zrem(`${prefix}:${name}:${set}`, id);
        } finally {
          await admin.close();
        }
      },
      async dispose() {
        await Promise.all(queues.map((queue) => queue.close()));
        const admin = new Bull('cleanup', redisUrl, { prefix });
        try {
          const keys = await admin.client.keys(`${prefix}:*`);
          if (keys.length) await admin.client.del(...keys);
        } finally {
          await admin.close();
        }
      },
    };
  },
};

function reachable(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = [
    `const s = require('node:net').connect(${Number(port || 6379)}, ${JSON.stringify(hostname)});`,
    `s.setTimeout(1000, () => process.exit(1));`,
    `s.on('connect', () => process.exit(0));`,
    `s.on('error', () => process.exit(1));`,
  ].join('\n');
  return spawnSync(process.execPath, ['-e', probe], { timeout: 5000 }).status === 0;
}

const backends = [...embeddedBackends];
if (process.env.CI || reachable(redisUrl)) backends.push(bullBackend);
else console.warn(`job-queue contract: Redis at ${redisUrl} is unreachable; the Bull adapter is not tested`);

const jobName = () => `test.job-${randomBytes(4).toString('hex')}`;

/** A promise a handler can wait on, and what opens it. */
function opening(): { gate: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { gate, release };
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A handler that parks until the test or the queue's shutdown signal lets it go. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

beforeAll(() => Logger.overrideLogger(false));

describe.each(backends)('JobQueue contract: $name', (backend) => {
  let harness: Harness;

  beforeEach(async () => {
    harness = await backend.open();
  });

  afterEach(async () => {
    await harness.dispose();
  });

  it('runs an enqueued job with its data, then drops it', async () => {
    const queue = harness.create();
    const name = jobName();
    const seen: JobContext<{ file: string }>[] = [];
    queue.process<{ file: string }>(name, async (job) => {
      seen.push(job);
    });
    // Let the worker find nothing and go idle, so only the enqueue itself can wake it.
    await sleep(100);

    const id = await queue.enqueue(name, { file: 'a.pdf' }, { attempts: 2 });

    await waitFor('the job to run', () => seen.length === 1);
    expect(seen[0]).toMatchObject({ id, name, data: { file: 'a.pdf' }, attempt: 1, maxAttempts: 2 });
    expect(seen[0].signal.aborted).toBe(false);
    await waitFor('the completed job to be removed', async () => (await queue.state(name, id)) === 'missing');
    await expect(queue.ping()).resolves.toBeUndefined();
  });

  it('runs at most `concurrency` jobs of a name at once, defaulting to the configured value', async () => {
    const queue = harness.create({ concurrency: 3 });
    const counters = () => ({ active: 0, peak: 0, done: 0 });
    const explicit = counters();
    const configured = counters();
    const handler = (c: ReturnType<typeof counters>) => async () => {
      c.active++;
      c.peak = Math.max(c.peak, c.active);
      await sleep(40);
      c.active--;
      c.done++;
    };
    const [two, three] = [jobName(), jobName()];
    queue.process(two, handler(explicit), { concurrency: 2 });
    queue.process(three, handler(configured));

    await Promise.all(Array.from({ length: 8 }, (_, i) => queue.enqueue(two, { i })));
    await Promise.all(Array.from({ length: 8 }, (_, i) => queue.enqueue(three, { i })));

    await waitFor('all jobs to run', () => explicit.done === 8 && configured.done === 8);
    expect(explicit.peak).toBe(2);
    expect(configured.peak).toBe(3);
  });

  it('retries a failing job after a backoff until it succeeds', async () => {
    const queue = harness.create();
    const name = jobName();
    const attempts: number[] = [];
    queue.process(name, async (job) => {
      attempts.push(job.attempt);
      if (job.attempt === 1) {
        throw new AppError(ErrorCode.UPSTREAM_FAILED, 'upstream answered 503', { retryable: true });
      }
      if (job.attempt === 2) throw new Error('socket hang up');
    });

    const id = await queue.enqueue(name, {}, { attempts: 3, backoffMs: 300 });

    await waitFor('the first try', () => attempts.length >= 1);
    await waitFor('the job to wait out its backoff', async () => (await queue.state(name, id)) === 'waiting');
    await waitFor('the third try to succeed', async () => (await queue.state(name, id)) === 'missing');
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('fails a job for good once its attempts are spent', async () => {
    const queue = harness.create();
    const name = jobName();
    let calls = 0;
    queue.process(name, async () => {
      calls++;
      throw new Error('still broken');
    });

    const id = await queue.enqueue(name, {}, { attempts: 2, backoffMs: 10 });

    await waitFor('the job to fail', async () => (await queue.state(name, id)) === 'failed');
    expect(calls).toBe(2);
  });

  it('does not retry a non-retryable AppError', async () => {
    const queue = harness.create();
    const name = jobName();
    let calls = 0;
    queue.process(name, async () => {
      calls++;
      throw new AppError(ErrorCode.NODE_CONFIGURATION, 'url parameter is required');
    });

    const id = await queue.enqueue(name, {}, { attempts: 5, backoffMs: 10 });

    await waitFor('the job to fail', async () => (await queue.state(name, id)) === 'failed');
    expect(calls).toBe(1);
  });

  it('ignores a second job with the same jobId under the same name', async () => {
    const queue = harness.create();
    const [name, otherName] = [jobName(), jobName()];

    const first = await queue.enqueue(name, { v: 1 }, { jobId: 'run_same' });
    const second = await queue.enqueue(name, { v: 2 }, { jobId: 'run_same' });
    await queue.enqueue(otherName, { v: 3 }, { jobId: 'run_same' });
    await queue.enqueue(name, { v: 'marker' });

    expect(first).toBe('run_same');
    expect(second).toBe('run_same');
    expect(await queue.state(otherName, 'run_same')).toBe('waiting');
    const seen: unknown[] = [];
    queue.process<{ v: unknown }>(
      name,
      async (job) => {
        seen.push(job.data.v);
      },
      { concurrency: 1 },
    );
    await waitFor('the marker job', () => seen.includes('marker'));
    expect(seen).toEqual([1, 'marker']);
  });

  it('reports where a job is', async () => {
    const queue = harness.create();
    const name = jobName();
    const { gate, release } = opening();
    const ran: string[] = [];
    queue.process<{ kind: string }>(name, async (job) => {
      ran.push(job.data.kind);
      if (job.data.kind === 'gated') await gate;
    });

    expect(await queue.state(name, 'job_unknown')).toBe('missing');
    const delayed = await queue.enqueue(name, { kind: 'delayed' }, { delayMs: 1500 });
    expect(await queue.state(name, delayed)).toBe('waiting');

    const gated = await queue.enqueue(name, { kind: 'gated' });
    await waitFor('the gated job to be active', async () => (await queue.state(name, gated)) === 'active');
    release();
    await waitFor('the gated job to complete', async () => (await queue.state(name, gated)) === 'missing');

    await waitFor('the delayed job to run', () => ran.includes('delayed'));
    expect(ran).toEqual(['gated', 'delayed']);
  });

  it('reports a job whose data is in none of its lists as stuck: it will never run, and its id stays taken', async () => {
    if (!harness.strandJob) return;
    const queue = harness.create();
    const name = jobName();
    const id = await queue.enqueue(name, { kind: 'stranded' }, { delayMs: 60_000 });
    await harness.strandJob(name, id);
    expect(await queue.state(name, id)).toBe('stuck');
  });

  it('counts jobs by state: due, delayed, running and failed', async () => {
    const queue = harness.create();
    const [name, otherName] = [jobName(), jobName()];
    expect(await queue.depth(name)).toEqual({ waiting: 0, delayed: 0, active: 0, failed: 0 });

    await queue.enqueue(name, { kind: 'gated' });
    await queue.enqueue(name, { kind: 'due' });
    await queue.enqueue(name, { kind: 'later' }, { delayMs: 60_000 });
    await queue.enqueue(otherName, { kind: 'elsewhere' });
    expect(await queue.depth(name)).toEqual({ waiting: 2, delayed: 1, active: 0, failed: 0 });

    const { gate, release } = opening();
    const ran: string[] = [];
    queue.process<{ kind: string }>(
      name,
      async (job) => {
        ran.push(job.data.kind);
        if (job.data.kind === 'gated') await gate;
        if (job.data.kind === 'due') throw new AppError(ErrorCode.NODE_CONFIGURATION, 'refused');
      },
      { concurrency: 1 },
    );
    await waitFor('the gated job to hold the only slot', async () => (await queue.depth(name)).active === 1);
    expect(await queue.depth(name)).toEqual({ waiting: 1, delayed: 1, active: 1, failed: 0 });

    release();
    await waitFor('the due job to fail', async () => (await queue.depth(name)).failed === 1);
    expect(await queue.depth(name)).toEqual({ waiting: 0, delayed: 1, active: 0, failed: 1 });
    expect(ran).toEqual(['gated', 'due']);
    expect(await queue.depth(otherName)).toEqual({ waiting: 1, delayed: 0, active: 0, failed: 0 });
  });

  it('keeps pending jobs across a restart', async () => {
    const name = jobName();
    const before = harness.create();
    const id = await before.enqueue(name, { file: 'b.docx' });
    await before.close();

    const after = harness.create();
    const seen: JobContext<unknown>[] = [];
    after.process(name, async (job) => {
      seen.push(job);
    });

    await waitFor('the job to run after the restart', () => seen.length === 1);
    expect(seen[0]).toMatchObject({ id, data: { file: 'b.docx' }, attempt: 1 });
  });

  it('re-runs a job whose worker died while running it', async () => {
    const queue = harness.create();
    const name = jobName();
    const id = await queue.enqueue(name, { step: 'embed' });
    expect(await harness.abandonNextJob(name)).toBe(id);
    expect(await queue.state(name, id)).toBe('active');

    const seen: string[] = [];
    queue.process(name, async (job) => {
      seen.push(job.id);
    });

    await waitFor('the abandoned job to run again', () => seen.length === 1, 15_000);
    expect(seen).toEqual([id]);
    await waitFor('the job to complete', async () => (await queue.state(name, id)) === 'missing');
  });

  it('on close, aborts handlers: finished jobs complete, interrupted ones come back without spending a try', async () => {
    const name = jobName();
    const before = harness.create();
    const started: string[] = [];
    const signals: AbortSignal[] = [];
    before.process<{ kind: string }>(name, async (job) => {
      started.push(job.data.kind);
      signals.push(job.signal);
      if (job.data.kind === 'stops') return untilAborted(job.signal);
      // Finishes the step it is in even though the signal asks it to stop.
      await untilAborted(job.signal).catch(() => sleep(50));
    });
    const stops = await before.enqueue(name, { kind: 'stops' }, { attempts: 1 });
    const finishes = await before.enqueue(name, { kind: 'finishes' }, { attempts: 1 });
    await waitFor('both jobs to start', () => started.length === 2);

    await before.close();

    expect(signals.every((signal) => signal.aborted)).toBe(true);
    await expect(before.ping()).rejects.toBeInstanceOf(AppError);
    const after = harness.create();
    expect(await after.state(name, stops)).toBe('waiting');
    expect(await after.state(name, finishes)).toBe('missing');
    const rerun: JobContext<unknown>[] = [];
    after.process(name, async (job) => {
      rerun.push(job);
    });
    await waitFor('the interrupted job to run again', () => rerun.length === 1);
    expect(rerun[0]).toMatchObject({ id: stops, attempt: 1, maxAttempts: 1 });
  });

  it('leaves jobs enqueued by a process without handlers (an api process) to the workers', async () => {
    const name = jobName();
    const api = harness.create();
    const id = await api.enqueue(name, {});
    await sleep(300);
    expect(await api.state(name, id)).toBe('waiting');

    const worker = harness.create();
    let ran = false;
    worker.process(name, async () => {
      ran = true;
    });
    await waitFor('a worker to run the job', () => ran);
  });

  it('takes jobs fairly across users and across flows within a user, not first come first served', async () => {
    const name = jobName();
    const api = harness.create();
    const a = (flow: string) => ({ share: { user: 'usr_a', flow } });
    const b = { share: { user: 'usr_b', flow: 'wf_b' } };
    // All queued before any worker starts: user A's eight (six of one flow, then two of another), then user B's two.
    const queued = [
      ...['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map((id) => [id, a('wf_1')] as const),
      ...['c1', 'c2'].map((id) => [id, a('wf_2')] as const),
      ...['b1', 'b2'].map((id) => [id, b] as const),
    ];
    for (const [id, options] of queued) await api.enqueue(name, { id }, { jobId: id, ...options });
    const worker = harness.create({ concurrency: 1 });
    const started: string[] = [];
    worker.process<{ id: string }>(name, async (job) => {
      started.push(job.data.id);
    });
    await waitFor('all jobs to run', () => started.length === queued.length);
    const before = (x: string, y: string) => started.indexOf(x) < started.indexOf(y);
    // B's jobs are not held behind A's backlog: each is taken within a turn or two of A's next.
    expect(before('b1', 'a5')).toBe(true);
    expect(before('b2', 'a5')).toBe(true);
    // Within A, the second flow's first job does not wait for the first flow's backlog.
    expect(before('c1', 'a5')).toBe(true);
    // And each flow keeps its own order (but for a1, the lane's: A had nothing pending, so it may run beside).
    const ofFlow = started.filter((id) => id.startsWith('a') && id !== 'a1');
    expect(ofFlow).toEqual(['a2', 'a3', 'a4', 'a5', 'a6']);
    expect(before('c1', 'c2') && before('b1', 'b2')).toBe(true);
  });

  it("starts a job of a user with nothing pending at once, while another user's long jobs hold every worker", async () => {
    const queue = harness.create({ concurrency: 2 });
    const name = jobName();
    const holding = opening();
    const started: string[] = [];
    queue.process<{ id: string }>(name, async (job) => {
      started.push(job.data.id);
      if (job.data.id.startsWith('a')) await holding.gate;
    });
    const heavy = { share: { user: 'usr_heavy', flow: 'wf_h' } };
    for (let i = 1; i <= 6; i++) await queue.enqueue(name, { id: `a${i}` }, { jobId: `a${i}`, ...heavy });
    // Both workers hold A's jobs (A's first may have taken a lane place too): nothing else of A's starts.
    await waitFor("A's jobs to fill the workers", () => started.length >= 2);
    await sleep(200);
    const heldByA = started.length;
    expect(heldByA).toBeLessThanOrEqual(3);

    const light = { share: { user: 'usr_light', flow: 'wf_l' } };
    await queue.enqueue(name, { id: 'b1' }, { jobId: 'b1', ...light });
    await waitFor("B's job to start beside A's", () => started.includes('b1'));
    // B's first job has ended: B has nothing pending again, so its next job takes the lane too (on
    // Bull, the end once cleared B's record under the lane's keys and B stayed pending behind A).
    await waitFor("B's first job to end", async () => (await queue.state(name, 'b1')) !== 'active');
    await sleep(300);
    await queue.enqueue(name, { id: 'b2' }, { jobId: 'b2', ...light });
    await waitFor("B's second job to start beside A's", () => started.includes('b2'));
    expect(started.filter((id) => id.startsWith('a'))).toHaveLength(heldByA);
    holding.release();
    await waitFor('all jobs to run', () => started.length === 8);
  });

  it('rejects a second handler for a name and invalid options', async () => {
    const queue = harness.create();
    const name = jobName();
    queue.process(name, async () => undefined);
    expect(() => queue.process(name, async () => undefined)).toThrow(/already registered/);
    await expect(queue.enqueue(name, {}, { attempts: 0 })).rejects.toMatchObject({ code: ErrorCode.VALIDATION_FAILED });
    await expect(queue.enqueue('bad name', {})).rejects.toMatchObject({ code: ErrorCode.VALIDATION_FAILED });
  });
});
