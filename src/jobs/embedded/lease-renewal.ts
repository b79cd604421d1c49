import type { Logger } from 'pino';
import { AppError, ErrorCode } from '../../common/app-error';
import type { JobStore } from '../../domain/job-store.port';
import type { Worker } from './embedded-workers';

/**
 * The embedded queue's heartbeat (every third of the lease): renews the lease of every job its
 * workers run whose handler has neither returned nor staged its completion. A job whose lease
 * another worker took over meanwhile (this process stalled past it) is aborted, and its outcome
 * dropped by the queue.
 */
export async function renewLeases(workers: Iterable<Worker>, store: JobStore, leaseMs: number, logger: Logger): Promise<void> {
  const leaseUntil = new Date(Date.now() + leaseMs);
  for (const worker of workers) {
    for (const running of worker.running.values()) {
      // A job whose completion is staged (JobContext.finishing) is gone once that commits: nothing to hold.
      if (running.handlerDone || running.completing) continue;
      try {
        const held = await store.renew(running.key, running.token, leaseUntil, new Date());
        if (held || running.handlerDone || running.leaseLost) continue;
        // This process stalled past its lease and another worker claimed the job: stop this copy.
        running.leaseLost = true;
        running.controller.abort(
          new AppError(ErrorCode.CANCELED, 'the job lease expired and another worker took it over', { retryable: true }),
        );
        logger.warn({ job: running.key.name, jobId: running.key.id }, 'lease lost to another worker; aborting this run');
      } catch (error) {
        logger.warn({ job: running.key.name, jobId: running.key.id, err: error }, 'renewing the job lease failed');
      }
    }
  }
}
