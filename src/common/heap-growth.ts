import { setFlagsFromString } from 'node:v8';

/**
 * How far past the live heap V8 lets an isolate's old generation grow before its next full
 * collection while this process ingests, in percent. V8's own factor is up to 4x the live heap for
 * a process whose heap may reach gigabytes (as here), so garbage that survived the young generation
 * piles up for a long time: a worker process ingesting held 58 MB live after a full collection and
 * grew to 200 MB of heap before the next one (40,000 passages, `--trace-gc`), the largest part of its
 * peak resident memory. 1.5x keeps it at half its live heap above it, for a full collection every
 * few seconds while ingesting (20-70 ms of concurrent marking each over 60 MB live).
 *
 * Only while a file is ingested: workflow runs make short-lived garbage that V8's own factor
 * collects more cheaply, and the same limit held for good cost them about a tenth more CPU a run
 * (the runs-cpu bench, quiet, in alternating rounds against the build without it).
 */
export const HEAP_GROWING_PERCENT = 50;

const given = (arg: string) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg);

/**
 * Whether the process was started with a growing factor of its own (`node --heap-growing-percent=N`):
 * then it is left alone. Node refuses the flag in NODE_OPTIONS, so the command line is the only place.
 */
export function growthGivenAtStart(execArgv: readonly string[] = process.execArgv): boolean {
  return execArgv.some(given);
}

let holders = 0;

/**
 * Runs `work` with V8's heap growing factor at HEAP_GROWING_PERCENT for this process and every thread
 * it started (V8's flags are the process's), back to V8's own (0) once no work holds it. V8 reads
 * the factor at each full collection, so it applies from the next one on.
 */
export async function withLimitedHeapGrowth<T>(work: () => Promise<T>, startedWithOwn = growthGivenAtStart()): Promise<T> {
  if (startedWithOwn) return work();
  if (holders++ === 0) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  try {
    return await work();
  } finally {
    if (--holders === 0) setFlagsFromString('--heap-growing-percent=0');
  }
}
