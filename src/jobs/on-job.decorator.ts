import { SetMetadata } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import type { JobClaiming } from '../domain/job-queue.port';

export const ON_JOB_METADATA = 'wcs:on-job';

export interface OnJobOptions {
  /**
   * Jobs of this name one worker process runs at once, or how to read it from the configuration;
   * JOB_CONCURRENCY when not given. 0: this process leaves these jobs to other worker processes.
   */
  concurrency?: number | ((config: AppConfig) => number);
  /** The handler's first write, to join each job's claim where the queue can (JobClaiming), read off the provider. */
  claiming?: (provider: never) => JobClaiming<never, unknown>;
  /** Callers waiting for these jobs' outcomes (ProcessOptions.extraSlots), read off the provider; undefined: none counted. */
  extraSlots?: (provider: never, config: AppConfig) => (() => number) | undefined;
}

/**
 * Marks the service method that handles the jobs of `name` (src/domain/job-names.ts). Found at boot
 * by JobHandlerScan and bound to the queue, which calls it with a JobContext: queue -> method, one hop.
 */
export function OnJob(name: string, options: OnJobOptions = {}): MethodDecorator {
  return SetMetadata(ON_JOB_METADATA, { name, ...options });
}
