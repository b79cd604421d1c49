import { ChildProcess, fork } from 'node:child_process';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { readdirSync } from 'node:fs';
import { getPriority, hostname, setPriority } from 'node:os';
import { isProcessMessage, ProcessMessage, processNotices } from './common/process-notices';
import type { WorkMetrics } from './metrics/metrics.service';

/** The argument a worker process of `npm start` is started with (main.ts reads it). */
export const SUPERVISED_WORKER_ARG = '--supervised-worker';
/** A worker that crashes is started again after this, doubled on each crash in a row, up to MAX_RESTART_DELAY_MS. */
const FIRST_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that ran this long before it crashed starts again after FIRST_RESTART_DELAY_MS. */
const STABLE_AFTER_MS = 60_000;
/** A scrape waits this long for each worker's metrics; one that has not answered counts with its last answer. */
const METRICS_ANSWER_MS = 1_000;

/**
 * glibc's malloc arenas at most in each process of the service, unless its environment sets
 * MALLOC_ARENA_MAX: glibc gives each thread that allocates an arena of its own (up to 8 per core),
 * and each keeps the room its thread's transient buffers took (a read step's vectors, a BM25
 * search's doclists). Two arenas held the API process of a 100,000-passage collection at 447 MiB at
 * its peak instead of 509, for the same CPU a search. glibc reads it at start: `npm start` and the
 * image set it for the process they start; this sets it for the worker processes it forks.
 */
export const MALLOC_ARENAS = '2';

/** Between the supervisor and one of its workers, never relayed: the supervisor asks, the worker answers. */
type MetricsMessage = { metrics: 'ask'; id: number } | { metrics: 'answer'; id: number; work: WorkMetrics };
const isMetricsMessage = (message: unknown): message is MetricsMessage =>
  typeof message === 'object' && message !== null && typeof (message as { metrics?: unknown }).metrics === 'string';

interface Slot {
  index: number;
  child?: ChildProcess;
  startedAt: number;
  ready: boolean;
  restartDelayMs: number;
  restartTimer?: NodeJS.Timeout;
  /** The work metrics its current process last answered. */
  work?: WorkMetrics;
  /** Its metrics questions waiting for an answer, by id. */
  asked: Map<number, (work: WorkMetrics) => void>;
}

/**
 * The worker processes of one `npm start` (APP_ROLE=all with WORKERS above 1): WORKERS-1 copies of
 * this program as APP_ROLE=worker, sharing its DATA_DIR (the SQLite store and the embedded queue,
 * which leases each job to one process) or its Redis. Each crashed worker is started again; on
 * stop (SIGTERM, SIGINT) each drains as a lone worker does, and stop() resolves once all exited.
 * They carry run notices between each other and this process (process-notices.ts): a `?wait=`
 * answered here hears of a run's end in a worker as it happens. A worker whose supervisor died
 * (kill -9) stops at once, as the whole service was killed: its runs are taken over at the next
 * start when their leases expire.
 */
export class WorkerProcesses {
  private readonly slots: Slot[];
  private stopping = false;
  private readonly logger: Logger;
  /** The work of worker processes that exited, as they last answered: /metrics counters never go back. */
  private retired: WorkMetrics[] = [];
  private nextQuestion = 0;

  constructor(
    private readonly count: number,
    private readonly env: NodeJS.ProcessEnv,
    logger: Logger,
    private readonly entry: string = process.argv[1],
  ) {
    this.logger = logger.child({ component: 'worker-processes' });
    this.slots = Array.from({ length: count }, (_, index) => ({
      index,
      startedAt: 0,
      ready: false,
      restartDelayMs: FIRST_RESTART_DELAY_MS,
      asked: new Map(),
    }));
  }

  start(): void {
    processNotices.connect((message) => this.broadcast(message), 1);
    for (const slot of this.slots) this.spawn(slot);
  }

  /** For readiness: how many worker processes have booted and run now. */
  status(): { ready: number; of: number } {
    return { ready: this.slots.filter((slot) => slot.ready).length, of: this.count };
  }

  /**
   * Each worker's work metrics, for the supervisor's /metrics: asked of every ready worker, waiting
   * at most METRICS_ANSWER_MS for each (one that is busy or gone counts with its last answer), plus
   * those of workers that exited. A worker killed loses only what it did since its last answer.
   */
  async workMetrics(): Promise<WorkMetrics[]> {
    await Promise.all(this.slots.map((slot) => this.ask(slot)));
    // Folded into one, however many times workers were restarted.
    if (this.retired.length > 1) this.retired = [await AggregatorRegistry.aggregate(this.retired).getMetricsAsJSON()];
    return [...this.retired, ...this.slots.flatMap((slot) => (slot.work ? [slot.work] : []))];
  }

  private ask(slot: Slot): Promise<void> {
    const child = slot.child;
    if (!child || !slot.ready || !child.connected) return Promise.resolve();
    const id = this.nextQuestion++;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        slot.asked.delete(id);
        resolve();
      }, METRICS_ANSWER_MS);
      slot.asked.set(id, (work) => {
        clearTimeout(timer);
        if (slot.child === child) slot.work = work;
        resolve();
      });
      child.send({ metrics: 'ask', id } satisfies MetricsMessage, (error) => {
        if (error) slot.asked.get(id)?.(slot.work ?? []);
      });
    });
  }

  /** Asks every worker to stop (SIGTERM: it drains) and resolves once all have exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    const exits = this.slots.map((slot) => {
      clearTimeout(slot.restartTimer);
      const child = slot.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      return exited;
    });
    await Promise.all(exits);
  }

  private spawn(slot: Slot): void {
    const child = fork(this.entry, [SUPERVISED_WORKER_ARG], {
      execArgv: process.execArgv,
      // A worker has no API port; its health is this process's: no two workers contend for one port.
      env: { MALLOC_ARENA_MAX: MALLOC_ARENAS, ...this.env, APP_ROLE: 'worker', WORKER_HEALTH_PORT: '0' },
    });
    slot.child = child;
    slot.startedAt = Date.now();
    slot.ready = false;
    child.on('message', (message: unknown) => {
      if (message === 'ready') {
        slot.ready = true;
        // What was watched before it could hear: the runs it takes from now on are told.
        for (const watch of processNotices.watches()) child.send(watch, () => undefined);
        this.logger.info({ worker: slot.index + 1, pid: child.pid }, 'worker process ready');
        return;
      }
      if (isMetricsMessage(message)) {
        if (message.metrics === 'answer') slot.asked.get(message.id)?.(message.work);
        slot.asked.delete(message.id);
        return;
      }
      if (!isProcessMessage(message)) return;
      processNotices.receive(message);
      this.broadcast(message, child);
    });
    // A worker that exits closes its channel; sending to it meanwhile must not throw.
    child.on('error', (error) => this.logger.warn({ worker: slot.index + 1, err: error }, 'worker process channel error'));
    child.once('exit', (code, signal) => {
      slot.child = undefined;
      slot.ready = false;
      if (slot.work) this.retired.push(slot.work);
      slot.work = undefined;
      for (const answer of slot.asked.values()) answer([]);
      slot.asked.clear();
      const gone: ProcessMessage = { service: 'gone', from: `${hostname()}:${child.pid}` };
      this.broadcast(gone);
      processNotices.receive(gone);
      if (this.stopping) return;
      const ranMs = Date.now() - slot.startedAt;
      if (ranMs >= STABLE_AFTER_MS) slot.restartDelayMs = FIRST_RESTART_DELAY_MS;
      this.logger.error(
        { worker: slot.index + 1, pid: child.pid, code, signal, restartInMs: slot.restartDelayMs },
        'worker process exited; starting it again',
      );
      slot.restartTimer = setTimeout(() => this.spawn(slot), slot.restartDelayMs);
      slot.restartDelayMs = Math.min(MAX_RESTART_DELAY_MS, slot.restartDelayMs * 2);
    });
  }

  /** Sends `message` to every worker but `except` (the one it came from). */
  private broadcast(message: ProcessMessage, except?: ChildProcess): void {
    for (const slot of this.slots) {
      const child = slot.child;
      if (!child || child === except || !child.connected) continue;
      child.send(message, (error) => {
        if (error) this.logger.debug({ worker: slot.index + 1, err: error }, 'could not reach worker process');
      });
    }
  }
}

/**
 * In a worker process of `npm start`: lowers its priority by `nice` (WORKERS_NICE), links its run
 * notices to the supervisor, tells it when it is ready, and stops at once if the supervisor dies.
 */
export function joinSupervisor(logger: Logger, nice: number): void {
  const send = process.send?.bind(process);
  if (!send) return;
  lowerPriority(nice, logger);
  processNotices.connect((message) => {
    if (process.connected) send(message, undefined, undefined, () => undefined);
  }, 1);
  process.on('message', (message: unknown) => {
    if (isProcessMessage(message)) processNotices.receive(message);
    else if (isMetricsMessage(message) && message.metrics === 'ask') void answerMetrics(message.id);
  });
  process.once('disconnect', () => {
    // Normal stops end the workers before the supervisor: it is gone without stopping them.
    logger.error('the supervising process is gone; stopping at once');
    process.exit(1);
  });
}

/** In a worker process of `npm start`: tells the supervisor it has booted, and where its work metrics are read. */
export function reportReady(work: () => Promise<WorkMetrics>): void {
  workMetrics = work;
  if (process.send && process.connected) process.send('ready');
}

let workMetrics: (() => Promise<WorkMetrics>) | undefined;

async function answerMetrics(id: number): Promise<void> {
  const work = workMetrics ? await workMetrics() : [];
  const answer: MetricsMessage = { metrics: 'answer', id, work };
  if (process.send && process.connected) process.send(answer, undefined, undefined, () => undefined);
}

/**
 * Runs every thread of this process `nice` above the niceness it started with (its supervisor's),
 * at most 19; 0 leaves them alone. On Linux a niceness is a thread's, and a thread starts with its
 * creator's: the threads that exist now (V8's, libuv's) are each set, and those started later by
 * them (embedding and search threads, sandbox processes) inherit it.
 */
function lowerPriority(nice: number, logger: Logger): void {
  if (nice <= 0) return;
  const target = Math.min(19, getPriority() + nice);
  let threads: number[];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    // Not Linux: a niceness is the whole process's.
    threads = [0];
  }
  for (const thread of threads) {
    try {
      setPriority(thread, target);
    } catch (error) {
      // A thread that ended meanwhile; any other failure leaves it at its supervisor's priority.
      if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH')
        logger.warn({ err: error, thread, nice: target }, 'could not lower the priority');
    }
  }
}
