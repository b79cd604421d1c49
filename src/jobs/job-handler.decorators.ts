import { Process as BullProcess, Processor as BullProcessor } from '@nestjs/bull';
import { applyDecorators, SetMetadata } from '@nestjs/common';

/**
 * The decorators of job handlers: `@Processor(name)` on the class, `@Process({ name, concurrency })`
 * on its method, as @nestjs/bull spells them and with its decorators applied, so BullModule's
 * explorer binds them when the queue is Bull. They also set metadata of our own, which
 * JobHandlerScan reads whatever the queue: @nestjs/bull keeps its metadata keys outside its public
 * API. The one place beside the Bull adapter that imports @nestjs/bull (a lint rule says so).
 */
export const JOB_PROCESSOR_METADATA = 'wcs:job-processor';
export const JOB_PROCESS_METADATA = 'wcs:job-process';

export interface JobProcessOptions {
  /** The job's name (src/jobs/job-names.ts); its queue has the same name. */
  name: string;
  /** Jobs of this name one worker process runs at once. */
  concurrency?: number;
}

/** A class whose `@Process` method handles the jobs of the queue `queue`. */
export function Processor(queue: string): ClassDecorator {
  return applyDecorators(BullProcessor(queue), SetMetadata(JOB_PROCESSOR_METADATA, queue));
}

/** The method that handles the jobs of `options.name`. */
export function Process(options: JobProcessOptions): MethodDecorator {
  return applyDecorators(BullProcess(options), SetMetadata(JOB_PROCESS_METADATA, options));
}
