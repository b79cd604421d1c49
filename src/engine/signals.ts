const NOTHING_TO_DISPOSE = () => undefined;

/**
 * A signal that follows `parent` and also aborts after `timeoutMs` with `onTimeout()` as reason.
 * Without a time limit that is `parent` itself: no controller, listener and disposal per node try
 * (about 8 µs each, 1.4% of a run's CPU on the runs-cpu bench, where no node has a limit).
 */
export function childSignal(
  parent: AbortSignal,
  timeoutMs: number | null,
  onTimeout: () => unknown,
): { signal: AbortSignal; dispose: () => void } {
  if (timeoutMs === null) return { signal: parent, dispose: NOTHING_TO_DISPOSE };
  const controller = new AbortController();
  const follow = () => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener('abort', follow, { once: true });
  const timer = setTimeout(() => controller.abort(onTimeout()), timeoutMs);
  timer.unref();
  return {
    signal: controller.signal,
    dispose: () => {
      parent.removeEventListener('abort', follow);
      clearTimeout(timer);
    },
  };
}

/**
 * childSignal's time limit on a signal whose owner's `abort` is at hand: after `timeoutMs` the
 * owner aborts it with `onTimeout()`, unless it was aborted before; no signal of its own.
 */
export function timeLimit(
  signal: AbortSignal,
  abort: (reason: unknown) => void,
  timeoutMs: number,
  onTimeout: () => unknown,
): { signal: AbortSignal; dispose: () => void } {
  const timer = setTimeout(() => {
    if (!signal.aborted) abort(onTimeout());
  }, timeoutMs);
  timer.unref();
  return { signal, dispose: () => clearTimeout(timer) };
}

/**
 * What each signal's abort settles: the rejects of its pending races, and the signals that follow
 * it (followUnless). One abort listener per signal, however many races it ends.
 */
const racing = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

function racesOn(signal: AbortSignal): Set<(reason: unknown) => void> {
  let races = racing.get(signal);
  if (races === undefined) {
    const pending = (races = new Set());
    racing.set(signal, pending);
    signal.addEventListener('abort', () => settleAll(pending, signal.reason), { once: true });
  }
  return races;
}

function settleAll(pending: Set<(reason: unknown) => void>, reason: unknown): void {
  for (const settle of pending) settle(reason);
  pending.clear();
}

/**
 * A signal that aborts with `parent`'s reason when `follows(reason)`, until disposed. It is told by
 * the abort listener `parent`'s races share, and ends its own races itself (it aborts only here):
 * no listener of its own on either signal, where adding and removing one cost 1-2 µs each on Node 20.
 */
export function followUnless(parent: AbortSignal, follows: (reason: unknown) => boolean): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const { signal } = controller;
  const races = new Set<(reason: unknown) => void>();
  racing.set(signal, races);
  const follow = (reason: unknown) => {
    if (!follows(reason)) return;
    controller.abort(reason);
    settleAll(races, reason);
  };
  if (parent.aborted) {
    follow(parent.reason);
    return { signal, dispose: NOTHING_TO_DISPOSE };
  }
  const told = racesOn(parent);
  told.add(follow);
  return { signal, dispose: () => void told.delete(follow) };
}

/**
 * Settles with the promise, or rejects with the signal's reason as soon as it aborts: a node that
 * ignores its signal cannot hold the run past its deadline (its promise is left to settle unseen).
 * A race joins its signal's set rather than add and remove an abort listener of its own: on Node
 * 20 that pair is most of a race's cost, and a run races its signal once per node try.
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  const races = racesOn(signal);
  return new Promise<T>((resolve, reject) => {
    races.add(reject);
    promise.then(
      (value) => {
        races.delete(reject);
        resolve(value);
      },
      (error) => {
        races.delete(reject);
        reject(error);
      },
    );
  });
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return raceSignal(new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), signal);
}
