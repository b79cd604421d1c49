/** The answer to one request against a limit of `limit` per window. */
export interface RateDecision {
  allowed: boolean;
  /** When refused: how long until the window opens again. */
  retryAfterMs: number;
}

/**
 * Fixed-window request counting per key (a workflow's webhook). The embedded adapter counts in
 * this process; with REDIS_URL the count is shared by every API process.
 */
export abstract class RateLimiter {
  abstract take(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  abstract close(): Promise<void>;
}
