import Bull from 'bull';
import type { Logger } from 'pino';
import { EnqueueOptions, JobHandler, JobQueue, JobShare, JobState, ProcessOptions, QueueDepth } from '../../domain/job-queue.port';
import { fairPlace, laneQueueName } from '../fair-turns';
import {
  assertJobName,
  backoffDelay,
  DEFAULT_BACKOFF_MS,
  errorMessage,
  FAILED_RETENTION_MS,
  isRetryable,
  queueUnavailable,
  resolveEnqueueOptions,
  settledWithin,
  shutdownReason,
} from '../job-policy';

export interface BullConnectionOptions {
  redisUrl: string;
  /** Redis key prefix: a job name's queue lives under `<prefix>:<name>:*`. */
  prefix?: string;
  /**
   * Bull `lockDuration`: how long a worker's lock on an active job lasts without renewal (it is
   * renewed every half of it). A worker that dies keeps its jobs this long before they are re-run,
   * and a handler that blocks the event loop longer than this is taken for dead and run twice.
   */
  lockDurationMs?: number;
  /**
   * Bull `stalledInterval`: how often each worker looks for active jobs whose lock lapsed (their
   * worker died) and puts them back in the wait list. Re-running waits for up to
   * lockDuration + 2 x stalledInterval, as a job is seen stalled by two consecutive checks.
   */
  stalledIntervalMs?: number;
  /**
   * Bull `maxStalledCount`: how many lock lapses a job survives before it is failed instead of
   * re-run, so a job that kills its worker every time does not loop forever.
   */
  maxStalledCount?: number;
}

export interface BullJobQueueOptions {
  /** Jobs of one name this process runs at once, unless process() says otherwise (JOB_CONCURRENCY). */
  concurrency: number;
  logger: Logger;
  /** Queues known up front (every registered job name): close() closes them, ping() uses them. */
  names?: readonly string[];
  /** How long close() waits for aborted handlers before disconnecting regardless. */
  shutdownGraceMs?: number;
  failedRetentionMs?: number;
  /** Where the queues live (REDIS_URL, QUEUE_PREFIX): what describe() says, and where the paired store's id is kept. */
  where?: { redisUrl: string; prefix: string };
}

const DEFAULTS = {
  shutdownGraceMs: 10_000,
  failedRetentionMs: FAILED_RETENTION_MS,
};

/** Named in each job's options, so the queue settings must define it in every process. */
const BACKOFF_STRATEGY = 'app-exponential';
const PING_QUEUE = '_ping';
const STATE_READS = 3;
/** Bull priority of a delayed job (taken first once due); a job in turn has priority turn + 1. */
const DUE_FIRST = 1;
/** How long a user's fair-share records outlive their last job (they only order jobs; stale ones are pruned). */
const FAIR_RECORDS_TTL_MS = 24 * 60 * 60 * 1000;
/** Where a job's share is kept in its Bull options, to drop it from its user's waiting jobs when it starts. */
type FairOptions = Bull.JobOptions & { fairShare?: JobShare };

/**
 * The state fairPlace needs, read atomically. KEYS: the queue's priority set (the jobs waiting in
 * turn, scored turn + 1), the user's flows (scored by their last turn), the user's pending jobs
 * (scored by turn, dropped when an attempt ends). Records behind the head are pruned.
 */
const FAIR_STATE_SCRIPT = `
local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(${DUE_FIRST}', '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local head = 0
if first[2] then head = tonumber(first[2]) - 1 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. head)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. head)
local flowLast = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '0')
return {head, flowLast, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3])}`;

type RedisOptions = Exclude<Bull.QueueOptions['redis'], string | undefined>;

/**
 * The settings every queue of the service shares (BullModule.forRootAsync), in every process:
 * the connection, the key prefix, lock and stall timings, and the backoff strategy jobs name.
 */
export function bullQueueOptions(options: BullConnectionOptions): Bull.QueueOptions {
  return {
    redis: redisOptions(options.redisUrl),
    prefix: options.prefix ?? 'jobs',
    settings: {
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 2,
      backoffStrategies: {
        [BACKOFF_STRATEGY]: (failedAttempts: number, error: Error, strategy?: { baseMs?: number }) =>
          error instanceof HandedBackAtShutdown ? 0 : backoffDelay(strategy?.baseMs ?? DEFAULT_BACKOFF_MS, failedAttempts),
      },
    },
  };
}

/** Thrown to Bull for a job interrupted by shutdown: the backoff strategy re-queues it at once. */
class HandedBackAtShutdown extends Error {
  constructor(cause: unknown) {
    super(`interrupted by shutdown: ${errorMessage(cause)}`, { cause });
    this.name = 'HandedBackAtShutdown';
  }
}

/** KEYS[1] held for ARGV[1] for ARGV[2] ms unless another value holds it under a live TTL. */
const HOLD_SCRIPT = `local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] and redis.call('PTTL', KEYS[1]) > 0 then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]`;

/**
 * The scale-out queue: one Bull queue per job name on Redis (registered with
 * BullModule.registerQueue), so API processes enqueue and any number of worker processes run the
 * jobs; process() binds a handler with the registered queue's own `process(name, concurrency,
 * fn)`, which calls it with each job through `run()`. Bull
 * provides ids, attempts, delays and lock-based stall detection; this adapter adds the backoff
 * curve, non-retryable errors, abort signals and a shutdown that hands interrupted jobs back
 * without spending a try.
 */
export class BullJobQueue extends JobQueue {
  private readonly settings: Required<Omit<BullJobQueueOptions, 'logger' | 'names' | 'where'>>;
  private readonly where?: { redisUrl: string; prefix: string };
  private readonly logger: Logger;
  private readonly queues = new Map<string, Bull.Queue>();
  private readonly handled = new Set<string>();
  private readonly inFlight = new Set<AbortController>();
  private readonly starting: Promise<void>[] = [];
  private stopping = false;
  private closed?: Promise<void>;

  /** `queueFor` returns the Bull queue of a job name (the Nest provider of that queue). */
  constructor(
    private readonly queueFor: (name: string) => Bull.Queue,
    options: BullJobQueueOptions,
  ) {
    super();
    const { logger, names = [], where, ...rest } = options;
    this.where = where;
    this.settings = { ...DEFAULTS, ...rest };
    this.logger = logger.child({ component: 'jobs', queue: 'bull' });
    for (const name of names) this.queue(name);
  }

  /**
   * A job with a share takes its fair place (src/jobs/fair-turns.ts) as its Bull priority, in its
   * queue or in the lane's (a queue of its own, served beside it); the records of the user's
   * waiting jobs and flows that the next place is read from are written with it.
   */
  async enqueue<T>(name: string, data: T, options?: EnqueueOptions): Promise<string> {
    const resolved = resolveEnqueueOptions(name, options);
    if (this.stopping) throw queueUnavailable(new Error('closed'));
    try {
      const opts: FairOptions = {
        jobId: resolved.jobId,
        attempts: resolved.attempts,
        delay: resolved.delayMs || undefined,
        backoff: { type: BACKOFF_STRATEGY, options: { baseMs: resolved.backoffMs } },
        removeOnComplete: true,
        removeOnFail: { age: Math.ceil(this.settings.failedRetentionMs / 1000) },
      };
      let queue = this.queue(name);
      const share = resolved.share;
      if (share && resolved.delayMs > 0) opts.priority = DUE_FIRST;
      else if (share) {
        const keys = fairKeys(queue, share);
        const [head, flowLast, userFlows, userPending] = (await queue.client.eval(
          FAIR_STATE_SCRIPT,
          3,
          queue.toKey('priority'),
          keys.flows,
          keys.jobs,
          share.flow,
        )) as number[];
        const place = fairPlace({ head, flowLast, userFlows, userPending: userPending > 0 });
        opts.priority = place.turn + 1;
        opts.fairShare = share;
        if (place.lane) queue = this.queue(laneQueueName(name));
        await queue.client
          .multi()
          .zadd(keys.flows, 'GT', place.turn, share.flow)
          .zadd(keys.jobs, place.turn, resolved.jobId)
          .pexpire(keys.flows, FAIR_RECORDS_TTL_MS)
          .pexpire(keys.jobs, FAIR_RECORDS_TTL_MS)
          .exec();
      }
      // An existing job with this id (waiting, active, delayed or failed) makes add() a no-op.
      await queue.add(name, data ?? null, opts);
    } catch (error) {
      throw queueUnavailable(error);
    }
    return resolved.jobId;
  }

  /** `options.claiming` is not used: Bull's claims do not commit with the store's writes. */
  process<T>(name: string, handler: JobHandler<T>, options: ProcessOptions = {}): void {
    assertJobName(name);
    if (this.handled.has(name)) throw new Error(`a handler for job ${name} is already registered`);
    if (this.stopping) throw new Error(`the job queue is closed; cannot process ${name}`);
    this.handled.add(name);
    const concurrency = options.concurrency ?? this.settings.concurrency;
    for (const queueName of [name, laneQueueName(name)]) this.starting.push(this.startWorker(queueName, name, handler, concurrency));
  }

  async state(name: string, jobId: string): Promise<JobState> {
    try {
      // Bull reads the lists one by one, so a job moving between two of them (delayed to waiting,
      // waiting to active) reads as in none ('stuck'): read again rather than call it missing.
      for (let read = 0; read < STATE_READS; read++) {
        const job = (await this.queue(name).getJob(jobId)) ?? (await this.queue(laneQueueName(name)).getJob(jobId));
        if (!job) return 'missing';
        const state = await job.getState();
        switch (state) {
          case 'active':
            return 'active';
          case 'completed':
            return 'completed';
          case 'failed':
            return 'failed';
          case 'waiting':
          case 'delayed':
          case 'paused':
            return 'waiting';
        }
      }
      // Still in no list: not a move caught halfway but a job no worker will ever fetch.
      return 'stuck';
    } catch (error) {
      throw queueUnavailable(error);
    }
  }

  async depth(name: string): Promise<QueueDepth> {
    try {
      const [counts, lane] = await Promise.all([this.queue(name).getJobCounts(), this.queue(laneQueueName(name)).getJobCounts()]);
      // A paused queue's jobs are due but held: still work waiting for a worker.
      const paused = (counts as Bull.JobCounts & { paused?: number }).paused ?? 0;
      return {
        waiting: counts.waiting + paused + lane.waiting,
        delayed: counts.delayed + lane.delayed,
        active: counts.active + lane.active,
        failed: counts.failed + lane.failed,
      };
    } catch (error) {
      throw queueUnavailable(error);
    }
  }

  async ping(): Promise<void> {
    if (this.stopping) throw shutdownReason();
    await this.anyQueue().client.ping();
  }

  override describe(): string {
    if (!this.where) return 'Bull on Redis';
    const redis = redisOptions(this.where.redisUrl);
    return `Redis at ${redis.host}:${redis.port} database ${redis.db}, QUEUE_PREFIX ${this.where.prefix}`;
  }

  override async pairStore(storeId: string, leaseMs: number): Promise<string> {
    const key = `${this.where?.prefix ?? 'bull'}:service:store`;
    // One script, so two processes booting at once agree; a key without a TTL (recorded before
    // leases) is taken over like one whose lease ran out.
    const held = await this.anyQueue().client.eval(HOLD_SCRIPT, 1, key, storeId, String(leaseMs));
    return String(held);
  }

  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private anyQueue(): Bull.Queue {
    return this.queues.values().next().value ?? this.queueFor(PING_QUEUE);
  }

  /** The queue of a job name, with this adapter's listeners attached the first time it is used. */
  private queue(name: string): Bull.Queue {
    let queue = this.queues.get(name);
    if (queue) return queue;
    queue = this.queueFor(name);
    queue.on('error', (error: Error) => this.logger.error({ job: name, err: error }, 'queue error'));
    queue.on('stalled', (job: Bull.Job) =>
      this.logger.warn({ job: name, jobId: job.id }, 'its worker stopped renewing the lock; re-queued'),
    );
    this.queues.set(name, queue);
    return queue;
  }

  /**
   * Bull's close() does not wait for a worker that is still connecting, and such a worker then
   * leaves a connection open or a command failing after it; so start once both connections answer.
   */
  private async startWorker<T>(queueName: string, name: string, handler: JobHandler<T>, concurrency: number): Promise<void> {
    const queue = this.queue(queueName);
    try {
      await Promise.all([whenConnected(queue.client), whenConnected(blockingClient(queue))]);
    } catch (error) {
      this.logger.error({ job: name, err: error }, 'worker could not connect to Redis');
      return;
    }
    if (this.stopping) return;
    // Resolves only when the queue closes.
    queue
      .process(name, concurrency, (job: Bull.Job<T>) => this.run(job, handler))
      .catch((error: unknown) => this.logger.error({ job: name, err: error }, 'worker stopped'));
  }

  /** One job, with the queue's rules: attempts, non-retryable errors, the shutdown signal. */
  private async run<T>(job: Bull.Job<T>, handler: JobHandler<T>): Promise<void> {
    const name = job.name;
    const fields = { job: name, jobId: job.id };
    const attempt = job.attemptsMade + 1;
    const maxAttempts = job.opts.attempts ?? 1;
    const controller = new AbortController();
    // Fetched just as close() began: hand it straight back.
    if (this.stopping) controller.abort(shutdownReason());
    this.inFlight.add(controller);
    try {
      if (controller.signal.aborted) throw controller.signal.reason;
      await handler({ id: String(job.id), name, data: job.data, attempt, maxAttempts, signal: controller.signal });
    } catch (error) {
      if (this.stopping && controller.signal.aborted) {
        // Bull counts every throw as a try; take that back so the job keeps its tries after a restart.
        job.attemptsMade -= 1;
        this.logger.info(fields, 'interrupted by shutdown; handed back to the queue');
        throw new HandedBackAtShutdown(error);
      }
      const retryable = isRetryable(error);
      if (!retryable) job.discard();
      if (!retryable || attempt >= maxAttempts) {
        this.logger.error({ ...fields, attempt, maxAttempts, error: errorMessage(error) }, 'job failed');
      } else {
        const retryInMs = backoffDelay(backoffBase(job), attempt);
        this.logger.warn({ ...fields, attempt, maxAttempts, retryInMs, error: errorMessage(error) }, 'job attempt failed; retrying');
      }
      throw error instanceof Error ? error : new Error(String(error));
    } finally {
      this.inFlight.delete(controller);
      // No longer pending: its user's next job may take the lane again. A failed write only delays that until the head passes it.
      const share = (job.opts as FairOptions).fairShare;
      // The records live beside the job name's queue, also for a lane job (whose job.queue is the lane's): removing
      // them under the lane's keys left the user pending, so their next run missed the lane and waited its turn.
      if (share) {
        const queue = this.queue(name);
        void queue.client.zrem(fairKeys(queue, share).jobs, String(job.id)).catch(() => undefined);
      }
    }
  }

  /**
   * Bull's close stops fetching, waits for active handlers and records their outcome, then
   * disconnects. Aborting the handlers' signals makes that wait short; a handler that ignores
   * the signal past the grace period is cut off, and its lock lapses so another worker re-runs it.
   */
  private async shutdown(): Promise<void> {
    this.stopping = true;
    const queues = [...this.queues.values()];
    await settledWithin(this.starting, this.settings.shutdownGraceMs);
    const closing = queues.map((queue) => queue.close());
    const reason = shutdownReason();
    for (const controller of this.inFlight) controller.abort(reason);
    if (!(await settledWithin(closing, this.settings.shutdownGraceMs))) {
      this.logger.warn({ handlers: this.inFlight.size }, 'job handlers ignored the shutdown signal; disconnecting from Redis');
      queues.forEach((queue) => queue.clients.forEach((client) => client.disconnect()));
    }
  }
}

type RedisClient = Bull.Queue['client'];

/** The connection a worker waits for jobs on: part of Bull's API, missing from its typings. */
const blockingClient = (queue: Bull.Queue): RedisClient => (queue as Bull.Queue & { bclient: RedisClient }).bclient;

/** Resolves once the client is connected; rejects if it is closed first. */
function whenConnected(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      client.off('end', onEnd);
      resolve();
    };
    const onEnd = () => {
      client.off('ready', onReady);
      reject(new Error('connection closed'));
    };
    client.once('ready', onReady);
    client.once('end', onEnd);
  });
}

/** Where a user's fair-share records live, beside their job name's queue (keys under its prefix). */
function fairKeys(queue: Bull.Queue, share: JobShare): { flows: string; jobs: string } {
  return { flows: queue.toKey(`fair:${share.user}:flows`), jobs: queue.toKey(`fair:${share.user}:jobs`) };
}

function backoffBase(job: Bull.Job): number {
  const backoff = job.opts.backoff;
  const options = typeof backoff === 'object' ? (backoff.options as { baseMs?: number } | undefined) : undefined;
  return options?.baseMs ?? DEFAULT_BACKOFF_MS;
}

/** Bull parses redis:// URLs itself but ignores rediss:// (TLS), so the URL is read here. */
export function redisOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  const db = parsed.pathname.replace(/^\//, '');
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : 6379,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    db: db ? Number(db) : 0,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
  };
}
