import { RUN_JOB } from '../domain/job-names';
import type { EnqueueOptions } from '../domain/job-queue.port';
import type { Run } from '../domain/run.model';

export { RUN_JOB };

/** A `workflow.run` job is only a pointer to a run: the run's state in the store decides what happens. */
export interface RunJobData {
  runId: string;
  /** Lets the worker read the workflow's concurrency limit before it claims the run. */
  workflowId?: string;
}
/** Tries of a run's job; the run itself is not retried, the delivery is (see RunWorker). */
export const RUN_JOB_OPTIONS = { attempts: 3, backoffMs: 1000 } as const;

export function runJob(run: Pick<Run, 'id' | 'workflowId'>): RunJobData {
  return { runId: run.id, workflowId: run.workflowId };
}

/**
 * The options of a run's job under `jobId`: its tries, and its share of the workers, the acting
 * user's and, within it, its workflow's (runs are taken fairly across users, then workflows).
 */
export function runJobOptions(run: Pick<Run, 'workflowId' | 'actingUserId'>, jobId: string, delayMs?: number): EnqueueOptions {
  return {
    jobId,
    ...RUN_JOB_OPTIONS,
    share: { user: run.actingUserId, flow: run.workflowId },
    ...(delayMs === undefined ? {} : { delayMs }),
  };
}
