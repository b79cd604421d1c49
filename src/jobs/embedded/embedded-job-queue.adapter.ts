import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { EnqueueOptions, JobHandler, JobQueue, JobState, ProcessOptions, QueueDepth, StagedEnqueue } from '../../domain/job-queue.port';
import { assertJobName, backoffDelay, errorMessage, isRetryable, queueUnavailable, settledWithin, shutdownReason } from '../job-policy';
import { laneQueueName } from '../fair-turns';
import { processNotices } from '../../common/process-notices';
import { ClaimedJob, JobStore, NewJob } from '../../domain/job-store.port';
import { StoreCommits } from '../../domain/store-commits.port';
import { DEFAULTS, EmbeddedJobQueueOptions, freeSlots, newJob, RunningJob, Worker } from './embedded-workers';
import { renewLeases } from './lease-renewal';

const PURGE_EVERY_MS = 60 * 60 * 1000;
/** The shortest time between two words to the other processes that jobs of one name are due. */
const ANNOUNCE_EVERY_MS = 10;

/**
 * The in-process queue of the embedded deployment. Pending work lives in the store (SQLite or
 * MongoDB), so it survives a restart; a job runs under a lease that its worker renews, and a job
 * whose lease expired (its process died) is claimed again by whoever looks next.
 */
export class EmbeddedJobQueue extends JobQueue {
  private readonly logger: Logger;
  private readonly settings: Required<Omit<EmbeddedJobQueueOptions, 'logger' | 'commits'>>;
  private readonly commits?: StoreCommits;
  private readonly workers = new Map<string, Worker>();
  private wakeTimer?: NodeJS.Timeout;
  private readonly announced = new Map<string, number>();
  /** Jobs another process queued: looked for at once. */
  private readonly stopListening = processNotices.onJobs((name) => this.wake(name, Date.now()));
  private wakeAt = Number.POSITIVE_INFINITY;
  private heartbeat?: NodeJS.Timeout;
  /** Ends the listening to other processes' commits, while it lasts (see followCommits). */
  private unwatchCommits?: () => void;
  private readonly stopFollowingLinks = processNotices.onLinkChange(() => this.followCommits());
  /** A look at the store for due jobs after another process wrote, in progress. */
  private watching = false;
  private nextPurgeAt = 0;
  private stopping = false;
  private closed?: Promise<void>;

  constructor(
    private readonly store: JobStore,
    options: EmbeddedJobQueueOptions,
  ) {
    super();
    const { logger, commits, ...settings } = options;
    this.settings = { ...DEFAULTS, ...settings };
    this.commits = commits;
    this.logger = logger.child({ component: 'jobs', queue: 'embedded' });
  }

  async enqueue<T>(name: string, data: T, options?: EnqueueOptions): Promise<string> {
    const job = newJob(name, data, options);
    let inserted: { lane: boolean } | null;
    try {
      inserted = await this.store.insert(job, job.at);
    } catch (error) {
      throw queueUnavailable(error);
    }
    this.queued(job, inserted);
    return job.id;
  }

  /**
   * On SQLite, where the job store writes in the other stores' transactions (insertWithin). With a
   * slot free here, the write claims too (claimSomeWithin, the handler's JobClaiming with it), and
   * the job starts once it commits: a run's accept and its claim in one commit where there were two,
   * and its start in the accept's turn rather than a claim's turn later.
   */
  override stage<T>(name: string, data: T, options?: EnqueueOptions): StagedEnqueue | undefined {
    const { store } = this;
    if (!store.insertWithin) return undefined;
    const job = newJob(name, data, options);
    let inserted: { lane: boolean } | null = null;
    let taken: { worker: Worker; claimed: ClaimedJob[] } | undefined;
    const unreserve = () => {
      if (taken) taken.worker.reserved--;
      taken = undefined;
    };
    return {
      write: () => {
        // Written again when its batch failed as a whole (group-commit.ts): the last try's claim was undone with it.
        unreserve();
        try {
          inserted = store.insertWithin!(job, job.at);
        } catch (error) {
          throw queueUnavailable(error);
        }
        if (inserted) taken = this.claimInAccept(job, inserted.lane);
      },
      committed: () => {
        const took = taken;
        unreserve();
        if (took && this.stopping) void Promise.all(took.claimed.map((one) => this.handBack(took.worker, one)));
        else if (took) for (const one of took.claimed) this.startJob(took.worker, one);
        // Another job came first in fair order (one this process had not seen yet): this one waits for its turn.
        if (!took?.claimed.some((one) => one.job.id === job.id)) this.queued(job, inserted);
      },
      undone: () => {
        const took = taken;
        unreserve();
        // Its reservation may have kept a claim in the same transaction from a slot: the worker looks again.
        if (took) void this.claimJobs(took.worker);
      },
    };
  }

  /**
   * One job claimed, inside the write storing `job`, by a worker with a slot free: in fair order,
   * so it is `job` unless another is due first. Not while the worker's claim loop runs (its claim
   * may be in the same transaction and count the same slot); the slot is reserved until the
   * transaction is answered, so a claim loop or another accept in it counts it taken.
   */
  private claimInAccept(job: NewJob & { at: Date }, lane: boolean): { worker: Worker; claimed: ClaimedJob[] } | undefined {
    const { store } = this;
    const now = Date.now();
    if (this.stopping || !store.claimSomeWithin || job.runAt.getTime() > now) return undefined;
    for (const key of lane ? [job.name, laneQueueName(job.name)] : [job.name]) {
      const worker = this.workers.get(key);
      if (!worker || worker.claiming || freeSlots(worker) <= 0) continue;
      const leaseUntil = new Date(now + this.settings.leaseMs);
      const claimed = store.claimSomeWithin(worker.name, new Date(now), leaseUntil, [randomUUID()], worker.lane, worker.joining);
      if (claimed.length === 0) return undefined;
      worker.reserved++;
      return { worker, claimed };
    }
    return undefined;
  }

  /** A job was stored (null: one with its id existed): the workers, and the other processes, hear of it. */
  private queued(job: NewJob & { at: Date }, inserted: { lane: boolean } | null): void {
    // Still accepted while stopping: the job is stored and the next start runs it.
    if (!inserted) return;
    const now = job.at.getTime();
    const runAt = job.runAt.getTime();
    this.wake(job.name, runAt, inserted.lane);
    if (runAt <= now) this.announce(job.name, now);
  }

  process<T>(name: string, handler: JobHandler<T>, options: ProcessOptions = {}): void {
    assertJobName(name);
    const joining = this.store.commitsWithOtherStores ? options.claiming : undefined;
    if (this.workers.has(name)) throw new Error(`a handler for job ${name} is already registered`);
    if (this.stopping) throw new Error(`the job queue is closed; cannot process ${name}`);
    for (const lane of [false, true]) {
      const worker: Worker = {
        name,
        lane,
        handler: handler as JobHandler<unknown>,
        ...(joining ? { joining } : {}),
        concurrency: options.concurrency ?? this.settings.concurrency,
        // The lane serves light users whatever callers wait; the slots of waiting callers are the main worker's.
        ...(options.extraSlots && !lane ? { extraSlots: options.extraSlots } : {}),
        running: new Map(),
        recheck: false,
        reserved: 0,
      };
      this.workers.set(lane ? laneQueueName(name) : name, worker);
      void this.claimJobs(worker);
    }
    this.heartbeat ??= setInterval(
      () => void renewLeases(this.workers.values(), this.store, this.settings.leaseMs, this.logger),
      Math.max(1, Math.floor(this.settings.leaseMs / 3)),
    );
    this.followCommits();
  }

  async state(name: string, jobId: string): Promise<JobState> {
    try {
      const job = await this.store.get({ name, id: jobId });
      return job ? job.state : 'missing';
    } catch (error) {
      throw queueUnavailable(error);
    }
  }

  async depth(name: string): Promise<QueueDepth> {
    try {
      return await this.store.depth(name, new Date());
    } catch (error) {
      throw queueUnavailable(error);
    }
  }

  override describe(): string {
    return 'the embedded queue in the store (no REDIS_URL)';
  }

  async ping(): Promise<void> {
    if (this.stopping) throw shutdownReason();
    await this.store.ping();
  }

  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  /**
   * Tells the service's other processes (worker processes of `npm start`) that jobs are due, at
   * most once per ANNOUNCE_EVERY_MS a name: a woken process claims until it is full or nothing is
   * due, so one word covers the jobs queued in that span.
   */
  private announce(name: string, now: number): void {
    if (now - (this.announced.get(name) ?? 0) < ANNOUNCE_EVERY_MS) return;
    this.announced.set(name, now);
    processNotices.announceJobs(name);
  }

  /**
   * Jobs of `name` are due at `runAt`. The lane's worker claims lane jobs only: it is woken for one
   * of those (or when the job's lane is not known, as for another process's jobs), not for every
   * enqueue, where it found nothing and looked up the next due time for nothing.
   */
  private wake(name: string, runAt: number, lane = true): void {
    if (runAt > Date.now()) return this.wakeUpAt(runAt);
    for (const key of lane ? [name, laneQueueName(name)] : [name]) {
      const worker = this.workers.get(key);
      if (worker) void this.claimJobs(worker);
    }
  }

  /** Claims jobs until the worker is full or nothing is due; callers never wait for it. */
  private claimJobs(worker: Worker): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (worker.claiming) {
      worker.recheck = true;
      return worker.claiming;
    }
    worker.claiming = this.claimLoop(worker).finally(() => {
      worker.claiming = undefined;
      // Asked for after the loop's last look (a slot freed as it ended): look again.
      if (worker.recheck) void this.claimJobs(worker);
    });
    return worker.claiming;
  }

  private async claimLoop(worker: Worker): Promise<void> {
    try {
      do {
        worker.recheck = false;
        while (!this.stopping && freeSlots(worker) > 0) {
          // Every free slot in one claim: it shares one turn, and so one commit of the store's group
          // commit, with the other writes of that turn (the runs it claims among them). The slots are
          // counted when the claim is made (at the end of the turn, on SQLite), not when asked for:
          // jobs that finish in one commit free their slots one after the other, and a claim that
          // counted only the first freed split the group, until each commit carried one run's writes.
          const now = Date.now();
          let free = 0;
          const tokens = () => {
            free = freeSlots(worker);
            return Array.from({ length: free }, () => randomUUID());
          };
          const claimed = await this.store.claimSome(
            worker.name,
            new Date(now),
            new Date(now + this.settings.leaseMs),
            tokens,
            worker.lane,
            worker.joining,
          );
          if (this.stopping) {
            await Promise.all(claimed.map((one) => this.handBack(worker, one)));
            return;
          }
          for (const one of claimed) this.startJob(worker, one);
          // Callers who waited left before the claim: its slots are full, and the next freed one looks again.
          if (free <= 0) break;
          if (claimed.length < free) {
            await this.sleepUntilDue(worker);
            break;
          }
        }
      } while (worker.recheck && !this.stopping);
    } catch (error) {
      worker.recheck = false;
      this.logger.error({ job: worker.name, err: error }, 'claiming jobs failed; trying again shortly');
      this.wakeUpAt(Date.now() + this.settings.pollIntervalMs);
    }
  }

  /** The lane's worker sleeps until a lane job is due: the other jobs' due times would wake it to find nothing. */
  private async sleepUntilDue(worker: Worker): Promise<void> {
    const due = await this.store.nextDueAt(worker.name, worker.lane);
    this.wakeUpAt(Math.min(due?.getTime() ?? Number.POSITIVE_INFINITY, Date.now() + this.settings.pollIntervalMs));
  }

  /**
   * Listens to other processes' commits while it has workers and no process tells this one of
   * their jobs (notices not linked); linked (npm start's processes, Redis), the announcements do
   * it, and the watch's timer stops unless a waiter listens too.
   */
  private followCommits(): void {
    const follow = !this.stopping && this.workers.size > 0 && this.commits?.watched === true && !processNotices.connected;
    if (follow) this.unwatchCommits ??= this.commits!.onCommitElsewhere(() => void this.watchStore());
    else {
      this.unwatchCommits?.();
      this.unwatchCommits = undefined;
    }
  }

  /**
   * Another process committed to the store: each worker with a free slot reads when its next job
   * is due (a read: no write lock) and claims if that is now; one claiming meanwhile looks again
   * once done, as its look may have come before that commit.
   */
  private async watchStore(): Promise<void> {
    if (this.stopping || this.watching) return;
    const free = [...this.workers.values()].filter((worker) => freeSlots(worker) > 0);
    for (const worker of free) if (worker.claiming) void this.claimJobs(worker);
    const idle = free.filter((worker) => !worker.claiming);
    if (idle.length === 0) return;
    this.watching = true;
    try {
      const now = Date.now();
      for (const worker of idle) {
        const due = await this.store.nextDueAt(worker.name, worker.lane);
        if (due && due.getTime() <= now) void this.claimJobs(worker);
        else if (due) this.wakeUpAt(due.getTime());
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'looking for jobs other processes queued failed');
    } finally {
      this.watching = false;
    }
  }

  /** One timer for all names, set to the earliest moment anything becomes due. */
  private wakeUpAt(at: number): void {
    if (this.stopping || at >= this.wakeAt) return;
    clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => this.onWake(), Math.max(0, at - Date.now()));
  }

  private onWake(): void {
    this.wakeTimer = undefined;
    this.wakeAt = Number.POSITIVE_INFINITY;
    void this.purgeFailedJobs();
    for (const worker of this.workers.values()) void this.claimJobs(worker);
  }

  /** A job claimed as the queue stopped: handed back unrun, with what its claim took for the handler. */
  private async handBack({ joining }: Worker, { job, token, taken }: ClaimedJob): Promise<void> {
    const fields = { job: job.name, jobId: job.id };
    if (taken !== undefined)
      await joining?.release(taken).catch((err: unknown) => this.logger.warn({ ...fields, err }, 'giving back what its claim took failed'));
    await this.store.release({ name: job.name, id: job.id }, token, new Date());
  }

  private startJob(worker: Worker, { job, token, taken: claimed, data }: ClaimedJob): void {
    const running: RunningJob = {
      job,
      key: { name: job.name, id: job.id },
      token,
      controller: new AbortController(),
      handlerDone: false,
      leaseLost: false,
      finished: Promise.resolve(),
      claimed,
      data,
    };
    worker.running.set(job.id, running);
    running.finished = this.runJob(worker, running).finally(() => this.freeSlot(worker, running));
  }

  /** The job's slot takes the next job (at most once per job). */
  private freeSlot(worker: Worker, running: RunningJob): void {
    if (worker.running.get(running.job.id) !== running) return;
    worker.running.delete(running.job.id);
    void this.claimJobs(worker);
  }

  /** The handler staged its job's completion: its slot's next job is claimed in this turn, so in that transaction (freeSlots). */
  private finishing(worker: Worker, running: RunningJob): void {
    if (running.completing) return;
    // Awaited only once the handler returns: a refusal before then must not go unhandled (a crash).
    (running.completing = this.store.complete(running.key, running.token)).catch(() => undefined);
    if (!running.handlerDone) void this.claimJobs(worker);
  }

  private async runJob(worker: Worker, running: RunningJob): Promise<void> {
    const { job, key, token, controller } = running;
    const fields = { job: job.name, jobId: job.id };
    try {
      if (job.attempts > job.maxAttempts) {
        // Only an expired lease gets here: the process running the last try died during it.
        const reason = `the worker running attempt ${job.maxAttempts} of ${job.maxAttempts} stopped before finishing`;
        await this.store.fail(key, token, reason, new Date());
        this.logger.error({ ...fields, reason }, 'job failed');
        return;
      }
      let failure: { error: unknown } | undefined;
      // Only where the job's completion commits with the handler's writes (see JobContext.finishing).
      const finishing = this.store.commitsWithOtherStores ? () => this.finishing(worker, running) : undefined;
      try {
        await worker.handler({
          id: job.id,
          name: job.name,
          data: running.data !== undefined ? running.data : (JSON.parse(job.data) as unknown),
          attempt: job.attempts,
          maxAttempts: job.maxAttempts,
          signal: controller.signal,
          ...(finishing ? { finishing } : {}),
          ...(running.claimed !== undefined ? { claimed: running.claimed } : {}),
        });
      } catch (error) {
        failure = { error };
      } finally {
        running.handlerDone = true;
      }
      if (running.completing) {
        // Completed beside the handler's last write, in its transaction: nothing is left to record.
        if (failure) this.logger.warn({ ...fields, err: failure.error }, 'failed after finishing its work; the job stays completed');
        this.freeSlot(worker, running);
        await running.completing;
      } else if (running.leaseLost) {
        this.logger.warn(fields, 'finished after another worker took it over; its outcome is dropped');
      } else if (failure) {
        await this.recordFailure(running, failure.error, fields);
      } else {
        // The next job is claimed in the same turn, so in the same transaction of the store's group
        // commit as this one's completion: one commit where there were two, for every job.
        const completed = this.store.complete(key, token);
        this.freeSlot(worker, running);
        await completed;
      }
    } catch (error) {
      // The store refused the outcome: the lease runs out and the job runs again, as after a crash.
      this.logger.error({ ...fields, err: error }, 'recording the job outcome failed');
    }
  }

  private async recordFailure(
    { job, key, token, controller }: RunningJob,
    error: unknown,
    fields: { job: string; jobId: string },
  ): Promise<void> {
    const now = new Date();
    const message = errorMessage(error);
    if (this.stopping && controller.signal.aborted) {
      await this.store.release(key, token, now);
      this.logger.info(fields, 'interrupted by shutdown; handed back for the next start');
      return;
    }
    if (!isRetryable(error) || job.attempts >= job.maxAttempts) {
      await this.store.fail(key, token, message, now);
      this.logger.error({ ...fields, attempt: job.attempts, maxAttempts: job.maxAttempts, error: message }, 'job failed');
      return;
    }
    const retryInMs = backoffDelay(job.backoffMs, job.attempts);
    const runAt = now.getTime() + retryInMs;
    if (await this.store.retry(key, token, new Date(runAt), message, now)) this.wakeUpAt(runAt);
    this.logger.warn(
      { ...fields, attempt: job.attempts, maxAttempts: job.maxAttempts, retryInMs, error: message },
      'job attempt failed; retrying',
    );
  }

  private async purgeFailedJobs(): Promise<void> {
    const now = Date.now();
    if (now < this.nextPurgeAt) return;
    this.nextPurgeAt = now + PURGE_EVERY_MS;
    try {
      await this.store.purgeFailed(new Date(now - this.settings.failedRetentionMs));
    } catch (error) {
      this.logger.warn({ err: error }, 'purging old failed jobs failed');
    }
  }

  /**
   * Stops claiming, aborts every handler's signal and waits for them: a handler that still
   * finishes is recorded as usual, one that stops is handed back without counting the try, and
   * one that outlives the grace period is handed back anyway (its late outcome is then ignored,
   * as the lease token no longer matches).
   */
  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.stopListening();
    this.stopFollowingLinks();
    this.followCommits();
    clearTimeout(this.wakeTimer);
    const workers = [...this.workers.values()];
    await Promise.allSettled(workers.map((worker) => worker.claiming));
    const running = workers.flatMap((worker) => [...worker.running.values()]);
    const reason = shutdownReason();
    for (const job of running) job.controller.abort(reason);
    const finished = await settledWithin(
      running.map((job) => job.finished),
      this.settings.shutdownGraceMs,
    );
    if (!finished) {
      const late = running.filter((job) => !job.handlerDone);
      this.logger.warn({ handlers: late.length }, 'job handlers ignored the shutdown signal; handing their jobs back');
      await Promise.allSettled(late.map((job) => this.store.release(job.key, job.token, new Date())));
    }
    clearInterval(this.heartbeat);
  }
}
