import { Piscina } from 'piscina';
import type { TransferListItem } from 'node:worker_threads';

export interface WorkerThreadPoolOptions {
  /**
   * Compiled module whose default export handles one task, or is a promise of that handler: a
   * thread takes work only once the promise has resolved (e.g. a model is loaded).
   */
  filename: string;
  threads: number;
}

export interface WorkerTaskOptions {
  transferList?: TransferListItem[];
  /** Drops the task if it is queued; terminates its thread if it is running. */
  signal?: AbortSignal;
}

/** The task's thread ended before answering: it exited, threw outside the handler, or never started. */
export class WorkerThreadStopped extends Error {
  constructor(
    message: string,
    readonly exitCode?: number,
  ) {
    super(message);
    this.name = 'WorkerThreadStopped';
  }
}

/** piscina words a thread's exit this way; the exit code is all callers need from it. */
const EXIT_MESSAGE = /^worker exited with code: (-?\d+)$/;

/**
 * Piscina, plus the two things this service's pools need that it leaves to the caller. A task never
 * waits forever: when every thread has failed to start (a broken worker script, a model that cannot
 * load), piscina only emits `error` and keeps the tasks queued, so they are rejected here. And
 * `startThreads()` waits until every thread is up, where piscina would start them on demand.
 *
 * Threads start when work arrives, stay until `destroy()`, and an idle thread never keeps the
 * process alive. A thread that dies is replaced when work next arrives, never in a loop.
 */
export class WorkerThreadPool {
  private readonly piscina: Piscina;
  private readonly threads: number;
  /** Aborts each task handed to piscina and not settled yet, when it has no thread left to run on. */
  private readonly pending = new Set<AbortController>();
  /** Ids of threads whose handler is loaded. */
  private readonly started = new Set<number>();
  private readonly startWaiters: { resolve(): void; reject(error: Error): void }[] = [];
  private startTask: unknown;
  private lastFailure?: Error;
  private destroyed = false;

  constructor(options: WorkerThreadPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1)
      throw new RangeError('A worker pool needs a positive integer of threads');
    this.threads = options.threads;
    this.piscina = new Piscina({
      filename: options.filename,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: Infinity,
      // Idle threads keep a live event loop (as plain workers do) instead of blocking in Atomics.wait:
      // tasks here last milliseconds to minutes, so the saved wake-up is worth nothing.
      atomics: 'disabled',
      recordTiming: false,
    });
    this.piscina.on('workerCreate', (thread: { id: number }) => {
      this.started.add(thread.id);
      if (this.started.size >= this.threads) for (const waiter of this.startWaiters.splice(0)) waiter.resolve();
    });
    this.piscina.on('workerDestroy', (thread: { id: number }) => {
      this.started.delete(thread.id);
      // piscina forgets the thread right after this event.
      setImmediate(() => {
        if (this.startWaiters.length > 0) this.fillThreads();
        this.afterThreadLoss();
      });
    });
    // A thread that failed with no task running: while starting, or idle.
    this.piscina.on('error', (error: Error) => {
      this.lastFailure = error;
      for (const waiter of this.startWaiters.splice(0)) waiter.reject(new WorkerThreadStopped(error.message));
      this.afterThreadLoss();
    });
  }

  /** Runs `task` on a thread; rejects with WorkerThreadStopped when the thread ended first. */
  async run<Result>(task: unknown, options: WorkerTaskOptions = {}): Promise<Result> {
    if (this.destroyed) throw closedError();
    const controller = new AbortController();
    const { signal } = options;
    const forward = () => controller.abort(signal!.reason);
    if (signal?.aborted) forward();
    signal?.addEventListener('abort', forward, { once: true });
    this.pending.add(controller);
    try {
      return (await this.piscina.run(task, { transferList: options.transferList, signal: controller.signal })) as Result;
    } catch (error) {
      if (controller.signal.aborted) throw controller.signal.reason;
      throw this.destroyed ? closedError() : stopped(error);
    } finally {
      this.pending.delete(controller);
      signal?.removeEventListener('abort', forward);
    }
  }

  /**
   * Starts every thread and resolves once each has loaded its handler; rejects if one could not.
   * `noop` is a task the handler answers at once: piscina starts a thread only for a task.
   */
  startThreads(noop: unknown): Promise<void> {
    if (this.destroyed) return Promise.reject(closedError());
    if (this.started.size >= this.threads) return Promise.resolve();
    const all = new Promise<void>((resolve, reject) => this.startWaiters.push({ resolve, reject }));
    this.startTask = noop;
    this.fillThreads();
    return all;
  }

  /** Rejects queued and running tasks, terminates every thread and waits until each has exited. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const waiter of this.startWaiters.splice(0)) waiter.reject(closedError());
    await this.piscina.destroy();
  }

  /** Each task piscina cannot place on an idle thread starts one, up to the limit. */
  private fillThreads(): void {
    while (!this.destroyed && this.piscina.threads.length < this.threads) void this.run(this.startTask).catch(() => undefined);
  }

  /**
   * Without threads, piscina's queued tasks would wait for a task yet to come to start one. Callers
   * settle a task before queuing the next, so a queue with no thread means they could not start.
   */
  private afterThreadLoss(): void {
    if (this.destroyed || this.piscina.threads.length > 0 || this.pending.size === 0) return;
    const error = new WorkerThreadStopped(this.lastFailure?.message ?? 'worker thread stopped before taking its task');
    this.lastFailure = undefined;
    for (const controller of this.pending) controller.abort(error);
  }
}

function closedError(): WorkerThreadStopped {
  return new WorkerThreadStopped('The worker pool is closed');
}

function stopped(error: unknown): WorkerThreadStopped {
  if (error instanceof WorkerThreadStopped) return error;
  const message = messageOf(error);
  const exit = EXIT_MESSAGE.exec(message);
  return exit ? new WorkerThreadStopped(`exit code ${exit[1]}`, Number(exit[1])) : new WorkerThreadStopped(message);
}

/** Errors from a thread may come from another realm (jest runs code in a vm context): no `instanceof Error`. */
export function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}
