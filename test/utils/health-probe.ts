import { performance } from 'node:perf_hooks';

/**
 * Asks `GET /health` every 50 ms (one request at a time) and measures the longest stall: the
 * longest time between two answers, or from the last answer to `stop()`. The app under test runs
 * in the test's own process, so a frozen event loop holds both and shows as one long gap.
 */
export function probeHealth(baseUrl: string): { stop(): Promise<number> } {
  let running = true;
  let last = performance.now();
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const response = await fetch(`${baseUrl}/health`);
      await response.arrayBuffer();
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      worst = Math.max(worst, performance.now() - last);
      running = false;
      await loop;
      return worst;
    },
  };
}

/**
 * The worst stall while `attack` runs, and the same probe's worst stall over a quiet second
 * before it, measured in the same test (a busy machine stalls a little on its own).
 */
export async function stallDuring(baseUrl: string, attack: () => Promise<void>): Promise<{ stall: number; baseline: number }> {
  const quiet = probeHealth(baseUrl);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const baseline = await quiet.stop();
  const probe = probeHealth(baseUrl);
  const attacked = await attack().then(
    () => null,
    (error: unknown) => ({ error }),
  );
  const stall = await probe.stop();
  if (attacked) throw attacked.error;
  return { stall, baseline };
}
