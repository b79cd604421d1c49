import { Type } from '@nestjs/common';
import { Process, Processor } from '../jobs/job-handler.decorators';
import { RUN_JOB } from '../jobs/job-names';
import { JobDelivery, JobQueue } from '../jobs/job-queue.port';
import { RunWorker } from './run-worker.service';
import { RunJobData } from './runs.service';

/**
 * The `workflow.run` handler. Built per application because `@Process` takes its concurrency
 * (JOB_CONCURRENCY) when the class is declared.
 */
export function runProcessor(concurrency: number): Type<unknown> {
  @Processor(RUN_JOB)
  class RunProcessor {
    constructor(
      private readonly jobs: JobQueue,
      private readonly worker: RunWorker,
    ) {}

    @Process({ name: RUN_JOB, concurrency })
    handle(delivery: JobDelivery<RunJobData>): Promise<void> {
      return this.jobs.run(delivery, (job) => this.worker.handle(job));
    }
  }
  return RunProcessor;
}
