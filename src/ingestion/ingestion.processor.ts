import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { JobQueue } from '../jobs/job-queue.port';
import { FileStore } from '../storage/ports/file-store.port';
import { enqueueIngestion, FILE_INGEST_JOB, FileIngestJob } from './ingestion.job';
import { IngestionService } from './ingestion.service';

const RECONCILE_PAGE = 200;

/**
 * Registers the `file.ingest` handler, and at the boot of a process that runs workers re-queues
 * unfinished files the queue has no live job for: nothing accepted is lost to a crash between
 * storing a file and queuing it, nor to a queue that lost its data.
 */
@Injectable()
export class IngestionProcessor implements OnApplicationBootstrap {
  private readonly logger = new Logger('Ingestion');

  constructor(
    private readonly config: AppConfig,
    private readonly queue: JobQueue,
    private readonly ingestion: IngestionService,
    private readonly files: FileStore,
  ) {}

  /** After every module's init, so the first job never meets an index that is not ready. */
  async onApplicationBootstrap(): Promise<void> {
    // In `api` processes the queue keeps the handler but runs nothing.
    this.queue.process<FileIngestJob>(FILE_INGEST_JOB, (job) => this.ingestion.ingest(job), {
      concurrency: this.config.JOB_CONCURRENCY,
    });
    if (!this.config.runsWorkers) return;
    try {
      const requeued = await this.reconcile();
      if (requeued) this.logger.log(`re-queued ${requeued} unfinished file(s) that had no job`);
    } catch (error) {
      // The service can still take traffic; the files stay unfinished until the next start.
      this.logger.error(`reconciling unfinished files failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Returns how many files it queued again. */
  async reconcile(): Promise<number> {
    let requeued = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.files.listByStatus(['pending', 'processing'], RECONCILE_PAGE, after);
      if (page.length === 0) return requeued;
      for (const file of page) {
        const state = await this.queue.state(FILE_INGEST_JOB, file.id);
        if (state === 'waiting' || state === 'active') continue;
        // `missing`: stored but never queued, or lost with the queue. `completed`/`failed`: the job
        // ended without finishing the file (a crash between the two); its id is taken, so use another.
        const jobId = state === 'missing' ? file.id : `${file.id}-${Date.now().toString(36)}`;
        await enqueueIngestion(this.queue, { collectionId: file.collectionId, fileId: file.id }, jobId);
        requeued++;
      }
      after = page[page.length - 1].id;
    }
  }
}
