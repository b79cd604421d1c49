import { setFlagsFromString } from 'node:v8';

/**
 * How far past the live heap V8 lets an isolate's old generation grow before its next full
 * collection while this process ingests, in percent. V8's own factor is up to 4x the live heap for
 * a process whose heap may reach gigabytes (as here), so garbage that survived the young generation
 * piled up for a long time: a worker process ingesting held 58 MB live after a full collection and
 * grew to 200 MB of heap before the next one (40,000 passages, `--trace-gc`), the largest part of its
 * peak resident memory then. The factor was 1.5x at first; since an embeddings answer is decoded
 * into one array and its vectors kept as views of it, a worker ingesting holds less, and 2x left its
 * peak resident memory where 1.5x did (257-281 against 223-276 MiB at 50,000 passages, three
 * alternating rounds, load 6-8) while the worker's CPU fell from 226-258 to 201-204 µs a passage
 * (its V8 helper threads, concurrent marking, from 32-57 to 19-20; its main thread from 106-108 to
 * 97-100).
 *
 * Only while a file is ingested: workflow runs make short-lived garbage that V8's own factor
 * collects more cheaply, and the same limit held for good cost them about a tenth more CPU a run
 * (the runs-cpu bench, quiet, in alternating rounds against the build without it).
 */
export const HEAP_GROWING_PERCENT = 100;

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
