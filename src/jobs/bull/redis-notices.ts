import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../../common/logger';
import { isProcessMessage, ProcessMessage, processNotices } from '../../common/process-notices';
import { AppConfig } from '../../config/app-config';
import { redisOptions } from './bull-job-queue.adapter';

/**
 * With REDIS_URL, run notices (process-notices.ts) travel over Redis pub/sub on
 * `<QUEUE_PREFIX>:notices`: a `?wait=` or chat stream in any process, on any machine, hears of the
 * end and progress of a run that another ran as it happens. Only runs someone watches are sent.
 */
@Injectable()
export class RedisNotices implements OnModuleInit, OnApplicationShutdown {
  private publisher?: Redis;
  private subscriber?: Redis;
  private readonly channel: string;
  private readonly logger: Logger;
  private readonly send = (message: ProcessMessage): void => {
    this.publisher?.publish(this.channel, JSON.stringify(message)).catch((error: unknown) => {
      this.logger.debug({ err: error }, 'a run notice could not be published');
    });
  };

  constructor(
    private readonly config: AppConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.channel = `${config.QUEUE_PREFIX}:notices`;
    this.logger = logger.child({ component: 'notices' });
  }

  async onModuleInit(): Promise<void> {
    const options = { ...redisOptions(this.config.REDIS_URL!), maxRetriesPerRequest: 1, lazyConnect: true };
    this.publisher = new Redis(options);
    this.subscriber = new Redis(options);
    for (const client of [this.publisher, this.subscriber]) {
      // Redis away: waiters fall back to reading the store; the queue's own checks report it.
      client.on('error', (error: Error) => this.logger.debug({ err: error }, 'run notices: Redis connection error'));
    }
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      try {
        const message: unknown = JSON.parse(text);
        if (isProcessMessage(message)) processNotices.receive(message);
      } catch {
        // not one of ours
      }
    });
    try {
      await Promise.all([this.publisher.connect(), this.subscriber.connect()]);
      await this.subscriber.subscribe(this.channel);
      processNotices.connect(this.send, 2);
    } catch (error) {
      this.logger.warn({ err: error }, 'run notices over Redis are off: waiters read the store instead');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    processNotices.disconnect(this.send);
    this.subscriber?.disconnect();
    this.publisher?.disconnect();
  }
}
