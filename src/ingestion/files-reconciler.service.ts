import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../common/logger';
import { JobQueue } from '../domain/job-queue.port';
import { PeriodicReconciler } from '../jobs/periodic-reconciler';
import { FileStore } from '../domain/file-store.port';
import { StoredFile } from '../domain/file.model';
import { ensureIngestion } from './ingestion.job';

export interface FilesReconcilerOptions {
  intervalMs: number;
  /** Files looked at per pass; the next pass goes on from where this one stopped. */
  batchSize: number;
}

export const FILES_RECONCILER_OPTIONS = Symbol('FILES_RECONCILER_OPTIONS');
export const DEFAULT_FILES_RECONCILER_OPTIONS: FilesReconcilerOptions = { intervalMs: 10_000, batchSize: 200 };

/**
 * Files: a `pending` or `processing` file whose ingestion job is gone (stored but never queued, a
 * queue that lost its data, a job that ended without finishing the file) is queued again. A file
 * between its insert and its enqueue needs no grace period: both use the file id as job id, so the
 * later enqueue is a no-op; and the job leaves finished files alone.
 */
@Injectable()
export class FilesReconciler extends PeriodicReconciler {
  /** Where the last pass stopped, so a backlog larger than a batch is covered over several passes. */
  private after?: string;

  constructor(
    private readonly files: FileStore,
    private readonly jobs: JobQueue,
    @Inject(ROOT_LOGGER) logger: Logger,
    @Inject(FILES_RECONCILER_OPTIONS) private readonly options: FilesReconcilerOptions,
  ) {
    super(logger.child({ component: 'files-reconciler' }), options.intervalMs);
  }

  protected async reconcileOnce(): Promise<void> {
    const page = await this.files.listByStatus(['pending', 'processing'], this.options.batchSize, this.after);
    this.after = page.length === this.options.batchSize ? page[page.length - 1].id : undefined;
    for (const file of page) await this.ensureJob(file);
  }

  /**
   * `missing`: stored but never queued, or lost with the queue. `completed`/`failed`: the job ended
   * without finishing the file: a crash between the two, or a failure of the service's own (disk
   * full, database unavailable) that left the file pending to be tried again now.
   */
  private async ensureJob(file: StoredFile): Promise<void> {
    const { queued, jobId, state } = await ensureIngestion(this.jobs, file);
    if (!queued) return;
    this.logger.info(
      { fileId: file.id, jobId, lane: file.lane, jobState: state, status: file.status, ...(file.error ? { waitedFor: file.error } : {}) },
      'unfinished file had no job: queued it again',
    );
  }
}
