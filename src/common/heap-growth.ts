import { setFlagsFromString } from 'node:v8';

/**
 * How far past the live heap V8 lets an isolate's old generation grow before its next full
 * collection, in percent. V8's own factor is up to 4x the live heap for a process whose heap may
 * reach gigabytes (as here), so garbage that survived the young generation piles up for a long
 * time: a worker process ingesting held 58 MB live after a full collection and grew to 200 MB of
 * heap before the next one (40,000 passages, `--trace-gc`), the largest part of its peak resident
 * memory. 1.5x keeps every process and thread at half its live heap above it, for a full collection
 * every few seconds while ingesting (20-70 ms of concurrent marking each over 60 MB live).
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * Sets V8's heap growing factor for this process and every thread it starts (V8's flags are the
 * process's), unless the process was started with a factor of its own (`node
 * --heap-growing-percent=N` or NODE_OPTIONS). Read at each full collection, so it applies from the
 * next one on; called first thing at boot.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  const given = (arg: string) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg);
  if (execArgv.some(given) || nodeOptions.split(/\s+/).some(given)) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
