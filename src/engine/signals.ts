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

/** What each signal's pending races reject with it: one abort listener per signal, however many races it ends. */
const racing = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

function racesOn(signal: AbortSignal): Set<(reason: unknown) => void> {
  let races = racing.get(signal);
  if (races === undefined) {
    const pending = (races = new Set());
    racing.set(signal, pending);
    signal.addEventListener(
      'abort',
      () => {
        for (const reject of pending) reject(signal.reason);
        pending.clear();
      },
      { once: true },
    );
  }
  return races;
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
