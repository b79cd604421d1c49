import { Process, Processor } from '../jobs/job-handler.decorators';
import { Type } from '@nestjs/common';
import { FILE_INGEST_JOB } from '../jobs/job-names';
import { JobDelivery, JobQueue } from '../jobs/job-queue.port';
import { FileIngestJob } from './ingestion.job';
import { IngestionService } from './ingestion.service';

/**
 * The `file.ingest` handler. Built per application because `@Process` takes its concurrency
 * (JOB_CONCURRENCY) when the class is declared.
 */
export function ingestionProcessor(concurrency: number): Type<unknown> {
  @Processor(FILE_INGEST_JOB)
  class IngestionProcessor {
    constructor(
      private readonly jobs: JobQueue,
      private readonly ingestion: IngestionService,
    ) {}

    @Process({ name: FILE_INGEST_JOB, concurrency })
    ingest(delivery: JobDelivery<FileIngestJob>): Promise<void> {
      return this.jobs.run(delivery, (job) => this.ingestion.ingest(job));
    }
  }
  return IngestionProcessor;
}
