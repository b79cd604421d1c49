import { testRedis, TestRedis } from './workflows-fixtures';

/** One of the job queues a suite runs on, with the configuration that selects it. */
export interface QueueSetup {
  name: string;
  /** The environment that selects this queue. */
  env(): Promise<Record<string, string>>;
  cleanup(): Promise<void>;
}

/**
 * The embedded queue and Bull on Redis (a prefix of its own under REDIS_TEST_URL's server), for
 * `describe.each`: a suite proves its behaviour on both. Without Redis the Bull half fails with
 * what to do rather than pass unseen.
 */
export function bothQueues(label: string): QueueSetup[] {
  let redis: TestRedis | null = null;
  return [
    { name: 'the embedded queue', env: async () => ({}), cleanup: async () => undefined },
    {
      name: 'Bull on Redis',
      env: async () => {
        redis = await testRedis(label);
        if (!redis) throw new Error('Redis is not reachable on 127.0.0.1:6379: start it (see README, "Test it") to run this suite on Bull');
        return { REDIS_URL: redis.url, QUEUE_PREFIX: redis.prefix };
      },
      cleanup: async () => {
        await redis?.cleanup();
      },
    },
  ];
}
