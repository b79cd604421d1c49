import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { Notice, processNotices } from '../common/process-notices';
import { StoreCommits } from '../domain/store-commits.port';
import type { Run } from '../domain/run.model';
import type { RunProgress } from '../engine/executor/run-contract';

/** What a running node reports before it ends: a finished sub-step, or a token of a streamed answer. */
export type RunProgressEvent = RunProgress;

/** A waiter's own look at the store where nothing else would wake it: MongoDB without Redis. */
const POLL_MS = 250;
/** Where its run's end wakes it (this process, notices, or the SQLite file's commits): a fallback. */
const FALLBACK_MS = 1_000;
/**
 * What a run's end wakes its waiters with, when told by a linked process or without the run; told
 * here with the finished run, they are woken with it; a commit elsewhere wakes them with nothing.
 */
const ENDED = Symbol('ended');

/**
 * Runs that reached a terminal state or made progress, for callers waiting on them (the webhook's
 * `?wait=`, chat, MCP tool calls): they wake at once instead of at their next look at the store.
 * Runs of the other processes of one `npm start` (its worker processes), or of processes linked by
 * Redis, are heard through process-notices.ts, for the runs a caller here watches. Processes that
 * are not linked (started by hand without Redis on one SQLite file) tell nothing: while a caller
 * here follows a run, each commit another process makes to the file wakes it to read its run
 * (StoreCommits), and tokens of a chat stream do not cross.
 */
@Injectable()
export class RunEvents implements OnModuleDestroy {
  /**
   * How long a caller waiting for a run's end sleeps at most before it reads the store on its own,
   * in case nothing woke it (a notice lost with a process that died, a status changed without one):
   * 1 s on SQLite, where the end wakes it even from a process not linked to this one; 250 ms on
   * MongoDB, whose commits cannot be watched so. Tests lengthen it to prove what wakes a caller.
   */
  fallbackMs: number;

  private readonly emitter = new EventEmitter().setMaxListeners(0);

  private readonly progressEmitter = new EventEmitter().setMaxListeners(0);

  private readonly unsubscribe = processNotices.subscribe((notice) => this.heard(notice));

  private waitingCallers = 0;

  constructor(private readonly commits: StoreCommits) {
    this.fallbackMs = commits.watched ? FALLBACK_MS : POLL_MS;
  }

  /** A node of `runId` running in this process made progress (a chat stream forwards it). */
  progress(runId: string, event: RunProgressEvent): void {
    this.progressEmitter.emit(runId, event);
    processNotices.publish({ runId, kind: 'progress', event });
  }

  /** Listens to the progress of `runId`, here or in a linked process; call the answer to stop listening. */
  onProgress(runId: string, listener: (event: RunProgressEvent) => void): () => void {
    this.progressEmitter.on(runId, listener);
    const unfollow = this.follow(runId);
    return () => {
      this.progressEmitter.off(runId, listener);
      unfollow();
    };
  }

  /**
   * Asks the other processes to tell this one when `runId` finishes or makes progress (or, not
   * linked, watches the store's commits), until the answer is called: a caller that watches before
   * it first looks at the store misses nothing.
   */
  watch(runId: string): () => void {
    return this.follow(runId);
  }

  /**
   * Callers of this process waiting now for a run's end (`?wait=`, chat, MCP tool calls): the run
   * worker runs as many runs beyond its concurrency (ProcessOptions.extraSlots), as each such
   * caller holds a connection until its run ends.
   */
  get callersWaiting(): number {
    return this.waitingCallers;
  }

  /** A caller begins to wait for a run's end; call the answer (once or more) when it stops. */
  callerWaits(): () => void {
    this.waitingCallers++;
    let counted = true;
    return () => {
      if (counted) this.waitingCallers--;
      counted = false;
    };
  }

  /**
   * `runId` ended in this process: its waiters here wake at once, handed `run` when given (the run
   * as the store's `complete` read it, which they answer with and do not change), and linked
   * processes are told.
   */
  finished(runId: string, run?: Run): void {
    this.emitter.emit(runId, run ?? ENDED);
    processNotices.publish({ runId, kind: 'finished' });
  }

  /** Whether a caller here waits for the end of `runId` now: its worker asks the store's `complete` for the finished run. */
  awaited(runId: string): boolean {
    return this.emitter.listenerCount(runId) > 0;
  }

  /**
   * Resolves when `runId` finishes (here or in a linked process), another process not linked to
   * this one commits to the store (the caller reads its run again), `ms` pass or `signal` aborts,
   * whichever is first: the finished run when its end was told here with it, true when the end
   * was told without it (its waiter reads the run itself rather than its status first), false
   * otherwise. Its callers follow the run meanwhile
   * (`watch` or `onProgress`, from before their first look at the store), so it follows nothing of
   * its own: a second watch and commit listener per call would wake nothing the first does not.
   */
  nextFinish(runId: string, ms: number, signal?: AbortSignal): Promise<Run | boolean> {
    return new Promise((resolve) => {
      const done = (told: Run | boolean) => {
        clearTimeout(timer);
        this.emitter.off(runId, heard);
        signal?.removeEventListener('abort', quiet);
        resolve(told);
      };
      const heard = (told?: Run | typeof ENDED) => done(told === ENDED ? true : (told ?? false));
      const quiet = () => done(false);
      const timer = setTimeout(quiet, ms);
      this.emitter.once(runId, heard);
      signal?.addEventListener('abort', quiet, { once: true });
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }

  /**
   * Notices of `runId` from linked processes; without them (none linked), commits of other
   * processes to the store wake its waiters here. The watch starts before the caller's first look
   * at the store, so a commit after that look is told.
   */
  private follow(runId: string): () => void {
    const unwatch = processNotices.watch(runId);
    const unhear =
      this.commits.watched && !processNotices.connected ? this.commits.onCommitElsewhere(() => this.emitter.emit(runId)) : undefined;
    return () => {
      unwatch();
      unhear?.();
    };
  }

  private heard(notice: Notice): void {
    if (notice.kind === 'finished') this.emitter.emit(notice.runId, ENDED);
    else this.progressEmitter.emit(notice.runId, notice.event as RunProgressEvent);
  }
}
