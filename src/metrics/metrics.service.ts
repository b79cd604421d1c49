import { performance } from 'node:perf_hooks';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RequestHistogram } from './request-histogram';

export type IngestionStage = 'fetch' | 'extract' | 'chunk' | 'embed' | 'index';
/** `retrying`: an attempt failed and the job will run again; `deleted`: the file went away meanwhile; `interrupted`: handed back at shutdown. */
const INGESTION_OUTCOMES = ['indexed', 'failed', 'retrying', 'deleted', 'interrupted'] as const;
export type IngestionOutcome = (typeof INGESTION_OUTCOMES)[number];
const TERMINAL_RUN_STATUSES = ['succeeded', 'failed', 'canceled'] as const;
export type TerminalRunStatus = (typeof TERMINAL_RUN_STATUSES)[number];
export type QueueDepthState = 'waiting' | 'delayed' | 'active' | 'failed';
/** Jobs per state, per job name. */
export type QueueDepths = Record<string, Record<QueueDepthState, number>>;
/** Runs waiting for a worker (status queued): how many, and how long the oldest has waited. */
export interface RunQueue {
  queued: number;
  oldestAgeSeconds: number;
  /** The most queued runs acting as any one user (the fullest share of RUNS_MAX_QUEUED_PER_USER). */
  maxQueuedPerUser?: number;
}

/** The metrics of one process's work, as prom-client's JSON: what another process adds to its own. */
export type WorkMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC): once per process, shared by every Metrics. */
  processMetrics?: boolean;
  /** How long one read of the queue depths serves the scrapes after it (default 5 s). */
  queueDepthMaxAgeMs?: number;
  /** How long a scrape waits for that read (default 2 s). */
  queueReadTimeoutMs?: number;
  /** RUNS_MAX_QUEUED_PER_USER (0: no limit), shown beside the fullest user's queued runs. */
  queuedPerUserLimit?: number;
}

/**
 * /metrics is public, as /health is: whoever can reach it could otherwise make every request a
 * round of queries to Redis or the store. Prometheus scrapes every 15 s or more, so a read serves
 * 5 s of scrapes and costs nothing they would see.
 */
const QUEUE_DEPTH_MAX_AGE_MS = 5_000;
/** A queue that has not answered by then is reported as failed rather than holding the scrape. */
const QUEUE_READ_TIMEOUT_MS = 2_000;

const SECONDS_FAST = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SECONDS_SLOW = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];
/** Requests no route matched share one label, so scanners cannot grow the series without bound. */
const UNMATCHED_ROUTE = 'unmatched';

let processRegistry: Registry | undefined;

/**
 * Process metrics belong to the process, not to an application: tests start many applications in
 * one process, and each set of default collectors adds an event-loop monitor and a GC observer.
 */
function sharedProcessRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The one place metrics are defined. Services record through these methods, never through
 * prom-client, and `render()` is the Prometheus text exposition served at /metrics (the API
 * process) or on the worker's health port. Each instance has its own registry, so several
 * applications in one process (tests) do not collide.
 */
export class Metrics {
  readonly contentType: string;
  /** What this process did (requests, runs, ingestion, searches, refusals): summed with its worker processes'. */
  private readonly workRegistry = new Registry();
  /** What it reads from the queue and store every process shares: reported once, never summed. */
  private readonly sharedRegistry = new Registry();
  private workOfOthers?: () => Promise<WorkMetrics[]>;
  private readonly process?: Registry;
  private readonly http: RequestHistogram;
  private readonly runs: Counter<'status'>;
  private readonly runDuration: Histogram<'status'>;
  private readonly ingestionStages: Histogram<'stage'>;
  private readonly ingestedFiles: Counter<'outcome'>;
  private readonly searches: Histogram<'mode'>;
  private readonly queueReadErrors: Counter;
  private readonly queueJobs: Gauge<'job' | 'state'>;
  private readonly runsRefused: Counter<'reason' | 'trigger'>;
  private readonly runsQueued: Gauge;
  private readonly runQueueAge: Gauge;
  private readonly runsQueuedPerUserMax: Gauge;
  private readQueues?: () => Promise<QueueDepths>;
  private readRunQueue?: () => Promise<RunQueue>;
  private readonly queueDepthMaxAgeMs: number;
  private readonly queueReadTimeoutMs: number;
  /** The read of the queue under way: at most one, even while a scrape that gave up on it is gone. */
  private queueRead?: Promise<QueueDepths>;
  /** The latest refresh of the queue gauge, shared by the scrapes of its lifetime, and when it began. */
  private queueRefresh?: Promise<void>;
  private queueRefreshedAt = 0;

  constructor(options: MetricsOptions = {}) {
    const work = [this.workRegistry];
    const shared = [this.sharedRegistry];
    this.queueDepthMaxAgeMs = options.queueDepthMaxAgeMs ?? QUEUE_DEPTH_MAX_AGE_MS;
    this.queueReadTimeoutMs = options.queueReadTimeoutMs ?? QUEUE_READ_TIMEOUT_MS;
    this.contentType = this.workRegistry.contentType;
    if (options.processMetrics) this.process = sharedProcessRegistry();
    this.http = new RequestHistogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status, from the first byte read to the last byte sent.',
      buckets: SECONDS_FAST,
      registers: work,
    });
    this.runs = new Counter({
      name: 'workflow_runs_total',
      help: 'Workflow runs that reached a terminal status.',
      labelNames: ['status'],
      registers: work,
    });
    this.runDuration = new Histogram({
      name: 'workflow_run_duration_seconds',
      help: 'Workflow runs executed by this process, from their first start to their terminal status.',
      labelNames: ['status'],
      buckets: SECONDS_SLOW,
      registers: work,
    });
    this.ingestionStages = new Histogram({
      name: 'ingestion_stage_duration_seconds',
      help: 'Time one file spent in each ingestion stage. Embedding and index writes overlap, so the stages of a file may add up to more than its wall time.',
      labelNames: ['stage'],
      buckets: SECONDS_SLOW,
      registers: work,
    });
    this.ingestedFiles = new Counter({
      name: 'ingestion_files_total',
      help: 'Files by the outcome of an ingestion attempt: indexed, failed, retrying, deleted, interrupted.',
      labelNames: ['outcome'],
      registers: work,
    });
    this.searches = new Histogram({
      name: 'search_duration_seconds',
      help: 'Collection searches by mode, from embedding the query to the hydrated passages.',
      labelNames: ['mode'],
      buckets: SECONDS_FAST,
      registers: work,
    });
    this.queueReadErrors = new Counter({
      name: 'job_queue_read_errors_total',
      help: 'Reads of the queue depths that failed or did not answer in time; the job_queue_jobs gauge is empty until a read succeeds.',
      registers: shared,
    });
    this.queueJobs = new Gauge({
      name: 'job_queue_jobs',
      help: 'Jobs in the queue by job name and state, read from the queue at most every few seconds (every process reports the same shared queue).',
      labelNames: ['job', 'state'],
      registers: shared,
    });
    this.runsRefused = new Counter({
      name: 'workflow_runs_refused_total',
      help: 'Runs not admitted: workflow-queue-limit (429), user-queue-limit (429), global-queue-limit (503), queue-unavailable (503), by what started them (webhook, mcp, schedule, ...).',
      labelNames: ['reason', 'trigger'],
      registers: work,
    });
    this.runsQueued = new Gauge({
      name: 'workflow_runs_queued',
      help: 'Runs waiting for a worker (status queued, across all processes), read from the store with the queue gauge.',
      registers: shared,
    });
    this.runQueueAge = new Gauge({
      name: 'workflow_run_queue_age_seconds',
      help: 'How long the oldest queued run has waited for a worker; 0 when none waits.',
      registers: shared,
    });
    // Per user without a user label: one series whatever the number of users (ids are unbounded).
    this.runsQueuedPerUserMax = new Gauge({
      name: 'workflow_runs_queued_per_user_max',
      help: 'The most queued runs acting as any one user (across all processes), read from the store with the queue gauge; compare with workflow_runs_queued_per_user_limit.',
      registers: shared,
    });
    if (options.queuedPerUserLimit !== undefined) {
      new Gauge({
        name: 'workflow_runs_queued_per_user_limit',
        help: "A user's share of the queued runs (RUNS_MAX_QUEUED_PER_USER), beyond which their callers get 429; 0 for no limit.",
        registers: shared,
      }).set(options.queuedPerUserLimit);
    }
    // Series that exist from the start, so a rate() over them does not miss the first increments.
    for (const status of TERMINAL_RUN_STATUSES) this.runs.labels(status).inc(0);
    for (const outcome of INGESTION_OUTCOMES) this.ingestedFiles.labels(outcome).inc(0);
  }

  /** `route` is the route pattern (`/api/v1/collections/:id`), undefined when no route matched. */
  httpRequest(method: string, route: string | undefined, status: number, seconds: number): void {
    this.http.record(method, route ?? UNMATCHED_ROUTE, status, seconds);
  }

  /** `seconds` is known for runs this process executed, not for a queued run canceled before it started. */
  runFinished(status: TerminalRunStatus, seconds?: number): void {
    this.runs.inc({ status });
    if (seconds !== undefined) this.runDuration.observe({ status }, seconds);
  }

  ingestionStage(stage: IngestionStage, seconds: number): void {
    this.ingestionStages.observe({ stage }, seconds);
  }

  fileIngested(outcome: IngestionOutcome): void {
    this.ingestedFiles.inc({ outcome });
  }

  runRefused(reason: string, trigger: string): void {
    this.runsRefused.inc({ reason, trigger });
  }

  search(mode: string, seconds: number): void {
    this.searches.observe({ mode }, seconds);
  }

  /** Where the queue gauge reads from (the JobQueue of the application). */
  readQueueDepthsFrom(read: () => Promise<QueueDepths>): void {
    this.readQueues = read;
  }

  /** Where the run queue gauges read from (the RunStore), refreshed with the queue gauge. */
  readRunQueueFrom(read: () => Promise<RunQueue>): void {
    this.readRunQueue = read;
  }

  /** This process's work metrics, for the process that serves /metrics for it (the supervisor of `npm start`). */
  workMetrics(): Promise<WorkMetrics> {
    return this.workRegistry.getMetricsAsJSON();
  }

  /** Other processes whose work this one reports (its worker processes), summed into its own. */
  addWorkOf(read: () => Promise<WorkMetrics[]>): void {
    this.workOfOthers = read;
  }

  /**
   * The Prometheus text exposition of this application's metrics, and the process's if enabled.
   * The work metrics add up those of the processes this one reports for; the process metrics are
   * this process's own.
   */
  async render(): Promise<string> {
    await this.refreshQueueDepths();
    const work = this.workOfOthers
      ? AggregatorRegistry.aggregate([await this.workRegistry.getMetricsAsJSON(), ...(await this.workOfOthers())])
      : this.workRegistry;
    const own = `${await work.metrics()}\n${await this.sharedRegistry.metrics()}`;
    return this.process ? `${await this.process.metrics()}\n${own}` : own;
  }

  /**
   * Before rendering rather than in a collect callback: prom-client renders metrics in parallel,
   * and the error counter must already count a failure the scrape reports. Scrapes within
   * `queueDepthMaxAgeMs` of a refresh share it, the values it read or its failure.
   */
  private refreshQueueDepths(): Promise<void> {
    if (!this.readQueues && !this.readRunQueue) return Promise.resolve();
    const now = performance.now();
    if (this.queueRefresh && now - this.queueRefreshedAt < this.queueDepthMaxAgeMs) return this.queueRefresh;
    this.queueRefreshedAt = now;
    this.queueRefresh = Promise.all([this.readQueueDepths(this.readQueues), this.readRunQueueGauges()]).then(() => undefined);
    return this.queueRefresh;
  }

  /**
   * A read that fails or outlasts the timeout counts as an error and empties the gauge rather than
   * keeping the last values: old figures would look like a live queue, while an absent series with
   * a rising error count says what happened. A read that hangs is not repeated; later refreshes
   * wait for it again, each within the timeout, so a hung Redis never gets a pile of queries.
   */
  private async readQueueDepths(read: (() => Promise<QueueDepths>) | undefined): Promise<void> {
    if (!read) return;
    if (!this.queueRead) {
      const pending = Promise.resolve().then(read);
      const settled = () => {
        if (this.queueRead === pending) this.queueRead = undefined;
      };
      pending.then(settled, settled);
      this.queueRead = pending;
    }
    let depths: QueueDepths;
    try {
      depths = await withTimeout(this.queueRead, this.queueReadTimeoutMs);
    } catch {
      this.queueJobs.reset();
      this.queueReadErrors.inc();
      return;
    }
    this.queueJobs.reset();
    for (const [job, states] of Object.entries(depths)) {
      for (const [state, count] of Object.entries(states)) this.queueJobs.set({ job, state }, count);
    }
  }

  /** The store answers for every process; one that fails or is slow leaves the gauges empty, as the queue's. */
  private async readRunQueueGauges(): Promise<void> {
    if (!this.readRunQueue) return;
    try {
      const { queued, oldestAgeSeconds, maxQueuedPerUser } = await withTimeout(this.readRunQueue(), this.queueReadTimeoutMs);
      this.runsQueued.set(queued);
      this.runQueueAge.set(oldestAgeSeconds);
      if (maxQueuedPerUser === undefined) this.runsQueuedPerUserMax.reset();
      else this.runsQueuedPerUserMax.set(maxQueuedPerUser);
    } catch {
      this.runsQueued.reset();
      this.runQueueAge.reset();
      this.runsQueuedPerUserMax.reset();
      this.queueReadErrors.inc();
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
