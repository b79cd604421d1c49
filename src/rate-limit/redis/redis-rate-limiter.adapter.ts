import Redis from 'ioredis';
import { AppError, ErrorCode } from '../../common/app-error';
import { RateDecision, RateLimiter } from '../../domain/rate-limiter.port';

/** Counts and starts the window in one step, so concurrent API processes never lose a count. */
const TAKE = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {count, ttl}
`;

/** Counts in Redis (REDIS_URL), shared by every API process. */
export class RedisRateLimiter extends RateLimiter {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    super();
    this.redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.defineCommand('takeWindow', { numberOfKeys: 1, lua: TAKE });
  }

  /**
   * @throws AppError UNAVAILABLE (retryable) when Redis cannot be reached: a limit that cannot be
   * counted refuses the call plainly (503) rather than letting every call through or answering 500.
   */
  async take(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    let count: number;
    let ttl: number;
    try {
      [count, ttl] = await (this.redis as Redis & { takeWindow(key: string, windowMs: number): Promise<[number, number]> }).takeWindow(
        `${this.prefix}:ratelimit:${key}`,
        windowMs,
      );
    } catch (error) {
      throw new AppError(
        ErrorCode.UNAVAILABLE,
        'The rate limit of this workflow cannot be counted right now (Redis does not answer); try again shortly',
        {
          cause: error,
          retryable: true,
        },
      );
    }
    return count <= limit ? { allowed: true, retryAfterMs: 0 } : { allowed: false, retryAfterMs: Math.max(1, ttl) };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
