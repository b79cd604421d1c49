import { AppError, ErrorCode } from '../common/app-error';
import { newId } from '../common/ids';
import { EnqueueOptions, JobShare } from '../domain/job-queue.port';

/**
 * What every JobQueue adapter must agree on, so a job behaves the same on SQLite, MongoDB or
 * Redis: option defaults and limits, the backoff curve, and which failures are worth a retry.
 */
export const DEFAULT_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 1000;
/** A job that keeps failing waits at most this long between tries. */
export const MAX_BACKOFF_MS = 60 * 60 * 1000;
/** Failed jobs stay visible to state() this long; completed jobs are deleted at once. */
export const FAILED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Long error messages (stack-like dumps from upstream bodies) are cut: a job store is not a log. */
const MAX_ERROR_LENGTH = 4000;
export const clipError = (error: string): string => (error.length > MAX_ERROR_LENGTH ? `${error.slice(0, MAX_ERROR_LENGTH)}...` : error);

const JOB_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/i;
const JOB_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const MAX_ATTEMPTS = 100;

export interface ResolvedEnqueueOptions {
  jobId: string;
  attempts: number;
  backoffMs: number;
  delayMs: number;
  share?: JobShare;
}

export function assertJobName(name: string): void {
  if (!JOB_NAME.test(name)) {
    throw new AppError(ErrorCode.VALIDATION_FAILED, `invalid job name ${JSON.stringify(name)}`);
  }
}

export function resolveEnqueueOptions(name: string, options: EnqueueOptions = {}): ResolvedEnqueueOptions {
  assertJobName(name);
  const resolved = {
    jobId: options.jobId ?? newId('job'),
    attempts: options.attempts ?? DEFAULT_ATTEMPTS,
    backoffMs: options.backoffMs ?? DEFAULT_BACKOFF_MS,
    delayMs: options.delayMs ?? 0,
    ...(options.share ? { share: options.share } : {}),
  };
  const problems: string[] = [];
  if (!JOB_ID.test(resolved.jobId)) problems.push('jobId must be 1-200 characters of [A-Za-z0-9._:-]');
  if (!Number.isInteger(resolved.attempts) || resolved.attempts < 1 || resolved.attempts > MAX_ATTEMPTS) {
    problems.push(`attempts must be an integer from 1 to ${MAX_ATTEMPTS}`);
  }
  if (!Number.isInteger(resolved.backoffMs) || resolved.backoffMs < 0) problems.push('backoffMs must be an integer >= 0');
  if (!Number.isInteger(resolved.delayMs) || resolved.delayMs < 0) problems.push('delayMs must be an integer >= 0');
  if (problems.length) {
    throw new AppError(ErrorCode.VALIDATION_FAILED, `invalid options for job ${name}: ${problems.join('; ')}`);
  }
  return resolved;
}

/** Wait before the next try, after `failedAttempts` tries failed: base, 2 x base, 4 x base... */
export function backoffDelay(baseMs: number, failedAttempts: number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, failedAttempts - 1));
}

/** Only an AppError can say a retry is pointless; anything else may be a blip. */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof AppError && !error.retryable);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The reason handlers' signals carry when the queue shuts down. */
export function shutdownReason(): AppError {
  return new AppError(ErrorCode.UNAVAILABLE, 'the job queue is shutting down', { retryable: true });
}

export function queueUnavailable(cause: unknown): AppError {
  return new AppError(ErrorCode.UNAVAILABLE, `the job queue is unavailable: ${errorMessage(cause)}`, {
    cause,
    retryable: true,
  });
}

/** Resolves true when every promise settled within `ms`, false when time ran out first. */
export async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([Promise.allSettled(promises).then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
