import { createServer } from 'node:net';
import { AppError, ErrorCode } from '../common/app-error';
import { testRedis } from '../../test/utils/workflows-fixtures';
import { MemoryRateLimiter } from './embedded/memory-rate-limiter.adapter';
import { RateLimiter } from '../domain/rate-limiter.port';
import { RedisRateLimiter } from './redis/redis-rate-limiter.adapter';

const adapters: [string, () => Promise<RateLimiter | null>][] = [
  ['memory', async () => new MemoryRateLimiter()],
  [
    'redis',
    async () => {
      const redis = await testRedis('rate-limit');
      return redis && new RedisRateLimiter(redis.url, redis.prefix);
    },
  ],
];

describe.each(adapters)('RateLimiter (%s)', (name, make) => {
  it('allows `limit` calls per window, then says how long until it opens again', async () => {
    const limiter = await make();
    if (!limiter) return console.warn(`RateLimiter (${name}) skipped: Redis is not reachable`);
    try {
      for (let i = 0; i < 3; i++) expect(await limiter.take('wfl_a', 3, 60_000)).toEqual({ allowed: true, retryAfterMs: 0 });
      const refused = await limiter.take('wfl_a', 3, 60_000);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect((await limiter.take('wfl_b', 3, 60_000)).allowed).toBe(true);
    } finally {
      await limiter.close();
    }
  });
});

describe('RedisRateLimiter without Redis', () => {
  it('refuses with a retryable UNAVAILABLE error instead of an unknown one', async () => {
    // A port that accepts and drops connections: nothing there speaks Redis.
    const server = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const limiter = new RedisRateLimiter(`redis://127.0.0.1:${port}`, 'rl-down');
    try {
      const failure = await limiter.take('wfl_a', 1, 1000).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppError);
      expect(failure).toMatchObject({ code: ErrorCode.UNAVAILABLE, retryable: true });
    } finally {
      await limiter.close();
      server.close();
    }
  });
});
