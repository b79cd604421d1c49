import { RateDecision, RateLimiter } from '../../domain/rate-limiter.port';

/** Windows that ended are dropped once this many keys are tracked. */
const SWEEP_ABOVE = 10_000;

/** Counts in this process: the embedded deployment has one API process. */
export class MemoryRateLimiter extends RateLimiter {
  private readonly windows = new Map<string, { endsAt: number; count: number }>();

  async take(key: string, limit: number, windowMs: number, now = Date.now()): Promise<RateDecision> {
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (this.windows.size >= SWEEP_ABOVE) this.sweep(now);
      window = { endsAt: now + windowMs, count: 0 };
      this.windows.set(key, window);
    }
    window.count++;
    return window.count <= limit ? { allowed: true, retryAfterMs: 0 } : { allowed: false, retryAfterMs: window.endsAt - now };
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
