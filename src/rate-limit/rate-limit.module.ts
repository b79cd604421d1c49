import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { MemoryRateLimiter } from './embedded/memory-rate-limiter.adapter';
import { RateLimiter } from '../domain/rate-limiter.port';

/** Limits count in Redis when there is one (several API processes share them), else in this process. */
@Module({
  providers: [
    {
      provide: RateLimiter,
      inject: [AppConfig],
      // ioredis is loaded only when REDIS_URL is set.
      useFactory: async (config: AppConfig): Promise<RateLimiter> =>
        config.REDIS_URL
          ? new (await import('./redis/redis-rate-limiter.adapter')).RedisRateLimiter(config.REDIS_URL, config.QUEUE_PREFIX)
          : new MemoryRateLimiter(),
    },
  ],
  exports: [RateLimiter],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(@Inject(RateLimiter) private readonly limiter: RateLimiter) {}

  async onApplicationShutdown(): Promise<void> {
    await this.limiter.close();
  }
}
