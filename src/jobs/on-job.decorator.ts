import { SetMetadata } from '@nestjs/common';

export const ON_JOB_METADATA = 'wcs:on-job';

export interface OnJobOptions {
  /** Jobs of this name one worker process runs at once; JOB_CONCURRENCY when not given. */
  concurrency?: number;
}

/**
 * Marks the service method that handles the jobs of `name` (src/jobs/job-names.ts). Found at boot
 * by JobHandlerScan and bound to the queue, which calls it with a JobContext: queue -> method, one hop.
 */
export function OnJob(name: string, options: OnJobOptions = {}): MethodDecorator {
  return SetMetadata(ON_JOB_METADATA, { name, ...options });
}
