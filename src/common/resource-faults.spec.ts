import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { AppError, ErrorCode } from './app-error';
import { insufficientStorage, isDiskFull, isServiceFault } from './resource-faults';

const coded = (code: string | number, name = 'Error') => Object.assign(new Error(`failed with ${code}`), { code, name });

describe('resource faults', () => {
  it('tells a full disk from other failures, through causes', () => {
    expect(isDiskFull(coded('ENOSPC'))).toBe(true);
    expect(isDiskFull(coded('EDQUOT'))).toBe(true);
    expect(isDiskFull(coded('SQLITE_FULL', 'SqliteError'))).toBe(true);
    expect(isDiskFull(coded(14031, 'MongoServerError'))).toBe(true);
    expect(isDiskFull(new AppError(ErrorCode.INTERNAL, 'x', { cause: coded('ENOSPC') }))).toBe(true);
    expect(isDiskFull(coded('SQLITE_BUSY'))).toBe(false);
    expect(isDiskFull(new AppError(ErrorCode.EXTRACTION_FAILED, 'corrupt PDF', { cause: coded('ENOSPC') }))).toBe(false);
  });

  it("calls the service's own failures its own, and a bad file's the file's", () => {
    for (const error of [
      coded('SQLITE_BUSY', 'SqliteError'),
      coded('SQLITE_IOERR_WRITE', 'SqliteError'),
      coded('EMFILE'),
      Object.assign(new Error('topology closed'), { name: 'MongoServerSelectionError' }),
      new AppError(ErrorCode.UNAVAILABLE, 'the job queue is shutting down'),
      new AppError(ErrorCode.INSUFFICIENT_STORAGE, 'full'),
    ]) {
      expect(isServiceFault(error)).toBe(true);
    }
    for (const error of [
      new AppError(ErrorCode.EXTRACTION_FAILED, 'corrupt PDF: Invalid PDF structure'),
      new AppError(ErrorCode.UNSUPPORTED_TYPE, 'unsupported type: image/png'),
      coded('SQLITE_CONSTRAINT_FOREIGNKEY', 'SqliteError'),
      new TypeError('cannot read properties of undefined'),
    ]) {
      expect(isServiceFault(error)).toBe(false);
    }
  });

  it('says where space is missing and how much to free', async () => {
    const dir = mkdtempSync(`${tmpdir()}/wcs-faults-`);
    try {
      const error = await insufficientStorage({ path: dir, bytesNeeded: Number.MAX_SAFE_INTEGER });
      expect(error).toMatchObject({ code: ErrorCode.INSUFFICIENT_STORAGE, httpStatus: 507, retryable: true });
      expect(error.message).toContain(dir);
      expect(error.message).toMatch(/Free at least .* on that disk/);
      expect(error.details).toMatchObject({
        path: dir,
        bytesNeeded: Number.MAX_SAFE_INTEGER,
        bytesFree: expect.any(Number),
        bytesToFree: expect.any(Number),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
