import { hostname } from 'node:os';

/** This process among all those of the service (on every machine, with Redis). */
export const PROCESS_ID = `${hostname()}:${process.pid}`;

/** Runs finished here unwatched that a late watch is still answered for. */
const RECENTLY_FINISHED = 1024;

/**
 * What one process of the service tells the others: a run it ran finished, or made progress (a
 * chat stream forwards the tokens). Only sent for runs another process watches.
 */
export interface Notice {
  runId: string;
  kind: 'finished' | 'progress';
  event?: unknown;
}

/** A message between the processes of the service: relayed by the supervisor (worker-processes.ts), or over Redis. */
export type ProcessMessage =
  | { service: 'notice'; from: string; notice: Notice }
  | { service: 'watch' | 'unwatch'; from: string; runId: string }
  | { service: 'gone'; from: string }
  | { service: 'jobs'; from: string; name: string }
  | { service: 'vectors'; from: string; collectionId: string };

export const isProcessMessage = (message: unknown): message is ProcessMessage =>
  typeof message === 'object' && message !== null && typeof (message as { service?: unknown }).service === 'string';

/**
 * The process's end of the channel between the processes of one service: callers waiting for a
 * run here (the webhook's `?wait=`, chat, MCP tool calls) `watch` it, so the process that runs it
 * sends its end and progress here as they happen; runs nobody watches elsewhere cost nothing. With
 * no other process (tests, APP_ROLE=api alone) it is a no-op. Waiters still look at the store now
 * and then, so a notice lost with a process that died only delays them.
 */
export class ProcessNotices {
  private readonly listeners = new Set<(notice: Notice) => void>();
  private readonly jobListeners = new Set<(name: string) => void>();
  private readonly vectorListeners = new Set<(collectionId: string) => void>();
  private readonly linkListeners = new Set<() => void>();
  /** Runs watched here, and how many times. */
  private readonly local = new Map<string, number>();
  /** Runs watched by other processes: run id -> process id -> count. */
  private readonly remote = new Map<string, Map<string, number>>();
  private send?: (message: ProcessMessage) => void;
  private reach = 0;
  /** Runs of this process that finished while no other process watched them, oldest first. */
  private readonly recentlyFinished = new Set<string>();

  /**
   * Links this process to the others; `send` reaches every other process. Redis (`reach` 2), which
   * reaches every process of the service, is kept over the supervisor's relay (1), which reaches
   * those of one `npm start`.
   */
  connect(send: (message: ProcessMessage) => void, reach: 1 | 2): void {
    if (reach < this.reach) return;
    this.reach = reach;
    this.send = send;
    for (const runId of this.local.keys()) send({ service: 'watch', from: PROCESS_ID, runId });
    for (const listener of [...this.linkListeners]) listener();
  }

  /** Unlinks the transport connected with `send` (it closes). */
  disconnect(send: (message: ProcessMessage) => void): void {
    if (this.send !== send) return;
    this.send = undefined;
    this.reach = 0;
    for (const listener of [...this.linkListeners]) listener();
  }

  get connected(): boolean {
    return this.send !== undefined;
  }

  /** `listener` is called each time this process is linked to the others or unlinked, until the answer is called. */
  onLinkChange(listener: () => void): () => void {
    this.linkListeners.add(listener);
    return () => this.linkListeners.delete(listener);
  }

  /**
   * A run of this process finished or made progress: told to the processes that watch it. A run
   * that finished before anyone's watch arrived is remembered (the last RECENTLY_FINISHED): a
   * process that accepted it may have been held between announcing its job and sending its watch
   * (on a loaded machine, for longer than the run took), and its waiter hears at once, not at its
   * next look at the store.
   */
  publish(notice: Notice): void {
    if (this.send && this.remote.has(notice.runId)) this.send({ service: 'notice', from: PROCESS_ID, notice });
    else if (this.send && notice.kind === 'finished') {
      this.recentlyFinished.add(notice.runId);
      if (this.recentlyFinished.size > RECENTLY_FINISHED) this.recentlyFinished.delete(this.recentlyFinished.values().next().value!);
    }
  }

  /** Notices of other processes reach `listener` until the answer is called. */
  subscribe(listener: (notice: Notice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Jobs named `name` were queued here: the other processes look for work at once instead of at their next poll. */
  announceJobs(name: string): void {
    this.send?.({ service: 'jobs', from: PROCESS_ID, name });
  }

  /** Jobs queued by other processes are told to `listener` until the answer is called. */
  onJobs(listener: (name: string) => void): () => void {
    this.jobListeners.add(listener);
    return () => this.jobListeners.delete(listener);
  }

  /** Vectors of `collectionId` were committed here: processes that answer searches take them in before they are asked. */
  announceVectors(collectionId: string): void {
    this.send?.({ service: 'vectors', from: PROCESS_ID, collectionId });
  }

  /** Vectors other processes committed are told to `listener` until the answer is called. */
  onVectors(listener: (collectionId: string) => void): () => void {
    this.vectorListeners.add(listener);
    return () => this.vectorListeners.delete(listener);
  }

  /** Someone here waits for `runId`: the other processes send its notices here until the answer is called. */
  watch(runId: string): () => void {
    const count = this.local.get(runId) ?? 0;
    this.local.set(runId, count + 1);
    if (count === 0) this.send?.({ service: 'watch', from: PROCESS_ID, runId });
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.local.get(runId) ?? 1) - 1;
      if (left > 0) return void this.local.set(runId, left);
      this.local.delete(runId);
      this.send?.({ service: 'unwatch', from: PROCESS_ID, runId });
    };
  }

  /** Every watch this process knows of, its own and the others': told to a process that joins late. */
  watches(): ProcessMessage[] {
    const own = [...this.local.keys()].map((runId): ProcessMessage => ({ service: 'watch', from: PROCESS_ID, runId }));
    const others = [...this.remote].flatMap(([runId, by]) =>
      [...by.keys()].map((from): ProcessMessage => ({ service: 'watch', from, runId })),
    );
    return [...own, ...others];
  }

  /** A message from another process (through the supervisor or Redis). */
  receive(message: ProcessMessage): void {
    if (message.from === PROCESS_ID) return;
    switch (message.service) {
      case 'notice':
        for (const listener of this.listeners) listener(message.notice);
        return;
      case 'watch': {
        // Still watched after: a run that stopped at a wait or an approval may go on here.
        if (this.recentlyFinished.delete(message.runId))
          this.send?.({ service: 'notice', from: PROCESS_ID, notice: { runId: message.runId, kind: 'finished' } });
        const by = this.remote.get(message.runId) ?? new Map<string, number>();
        by.set(message.from, (by.get(message.from) ?? 0) + 1);
        this.remote.set(message.runId, by);
        return;
      }
      case 'unwatch': {
        const by = this.remote.get(message.runId);
        const left = (by?.get(message.from) ?? 1) - 1;
        if (left > 0) by!.set(message.from, left);
        else by?.delete(message.from);
        if (by?.size === 0) this.remote.delete(message.runId);
        return;
      }
      case 'jobs':
        for (const listener of this.jobListeners) listener(message.name);
        return;
      case 'vectors':
        for (const listener of this.vectorListeners) listener(message.collectionId);
        return;
      case 'gone':
        for (const [runId, by] of this.remote) if (by.delete(message.from) && by.size === 0) this.remote.delete(runId);
        return;
    }
  }
}

/** The one channel of this process. */
export const processNotices = new ProcessNotices();
