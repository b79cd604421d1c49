import { statfs } from 'node:fs/promises';
import { AppError, ErrorCode } from './app-error';

/**
 * Failures that are the service's own (a full disk, a database that does not answer, a shutdown)
 * rather than the input's: the same work succeeds once resources return, so it is kept and tried
 * again instead of being recorded as the input's fault. Told apart by the codes the technologies
 * put on their errors, so that nothing here imports a driver.
 */

const DISK_FULL_ERRNO = new Set(['ENOSPC', 'EDQUOT']);
const SERVICE_ERRNO = new Set([...DISK_FULL_ERRNO, 'EMFILE', 'ENFILE', 'ENOMEM', 'EIO', 'EROFS', 'EACCES', 'EPERM', 'EBUSY', 'EAGAIN']);
/** better-sqlite3's SqliteError codes that speak of the database file or the machine, not of the data written. */
const SQLITE_SERVICE = /^SQLITE_(FULL|BUSY|LOCKED|IOERR|CANTOPEN|READONLY|NOMEM|PROTOCOL|CORRUPT|NOTADB)/;
const SQLITE_DISK_FULL = /^SQLITE_FULL/;
const MONGO_UNREACHABLE = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'MongoWriteConcernError',
]);
/** MongoDB's OutOfDiskSpace. */
const MONGO_DISK_FULL_CODES = new Set([14031]);
const MONGO_TRANSIENT_LABELS = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool'];
/** An error's causes are followed this deep at most (a cycle must not loop). */
const MAX_CAUSES = 8;

interface Coded {
  code?: unknown;
  name?: unknown;
  cause?: unknown;
  hasErrorLabel?: (label: string) => boolean;
}

/** The disk under DATA_DIR (or MongoDB's) is full: ENOSPC, a quota, SQLITE_FULL, MongoDB's OutOfDiskSpace. */
export function isDiskFull(error: unknown): boolean {
  return someCause(error, (e) => {
    if (e instanceof AppError) return e.code === ErrorCode.INSUFFICIENT_STORAGE ? true : e.code === ErrorCode.INTERNAL ? undefined : false;
    const code = e.code;
    if (typeof code === 'string') return DISK_FULL_ERRNO.has(code) || SQLITE_DISK_FULL.test(code) || undefined;
    if (typeof code === 'number') return MONGO_DISK_FULL_CODES.has(code) || undefined;
    return undefined;
  });
}

/**
 * The work failed for the service's reasons: its disk, its database, its queue or its own
 * shutdown (AppError UNAVAILABLE or INSUFFICIENT_STORAGE). Other AppErrors keep the meaning their
 * code gives them; INTERNAL ones and foreign errors are judged by what caused them.
 */
export function isServiceFault(error: unknown): boolean {
  return someCause(error, (e) => {
    if (e instanceof AppError) {
      if (e.code === ErrorCode.UNAVAILABLE || e.code === ErrorCode.INSUFFICIENT_STORAGE) return true;
      return e.code === ErrorCode.INTERNAL ? undefined : false;
    }
    const code = e.code;
    if (typeof code === 'string' && (SERVICE_ERRNO.has(code) || SQLITE_SERVICE.test(code))) return true;
    if (typeof code === 'number' && MONGO_DISK_FULL_CODES.has(code)) return true;
    if (typeof e.name === 'string' && MONGO_UNREACHABLE.has(e.name)) return true;
    if (typeof e.hasErrorLabel === 'function' && MONGO_TRANSIENT_LABELS.some((label) => e.hasErrorLabel!(label))) return true;
    return undefined;
  });
}

/** The first definite answer of `judge` along the error and its causes; undefined means "look at the cause". */
function someCause(error: unknown, judge: (error: Coded) => boolean | undefined): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSES && current !== null && typeof current === 'object'; depth++) {
    const verdict = judge(current as Coded);
    if (verdict !== undefined) return verdict;
    current = (current as Coded).cause;
  }
  return false;
}

/** Free bytes for the service on the file system holding `path`; null when it cannot be read. */
export async function freeBytes(path: string): Promise<number | null> {
  try {
    const stats = await statfs(path);
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    return null;
  }
}

/**
 * 507 Insufficient Storage, saying where space is missing and how much to free: `path` is the
 * folder that could not be written (DATA_DIR or the blob folder in it), `bytesNeeded` what the
 * write needed when known.
 */
export async function insufficientStorage(where: { path: string; bytesNeeded?: number }, cause?: unknown): Promise<AppError> {
  const free = await freeBytes(where.path);
  const needed = where.bytesNeeded;
  const toFree = needed !== undefined && free !== null ? Math.max(needed - free, 1) : undefined;
  const parts = [`The disk holding ${where.path} is full`];
  if (free !== null) parts.push(`: ${formatBytes(free)} free`);
  if (needed !== undefined) parts.push(`${free !== null ? ',' : ':'} ${formatBytes(needed)} needed`);
  const advice =
    toFree !== undefined
      ? `Free at least ${formatBytes(toFree)} on that disk (delete files or collections no longer needed, or grow the disk), then try again.`
      : 'Free space on that disk (delete files or collections no longer needed, or grow the disk), then try again.';
  return new AppError(ErrorCode.INSUFFICIENT_STORAGE, `${parts.join('')}. ${advice}`, {
    cause,
    retryable: true,
    details: { path: where.path, bytesFree: free, bytesNeeded: needed ?? null, bytesToFree: toFree ?? null },
  });
}

/** MongoDB's disk is not ours to measure: say whose it is. */
export function mongoStorageFull(cause?: unknown): AppError {
  return new AppError(
    ErrorCode.INSUFFICIENT_STORAGE,
    'MongoDB is out of disk space. Free space on the disk of its data directory (delete files or collections no longer needed, or grow the disk), then try again.',
    { cause, retryable: true, details: { path: null, bytesFree: null, bytesNeeded: null, bytesToFree: null } },
  );
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]} (${bytes} bytes)`;
}
