import { AppError, ErrorCode } from '../common/app-error';

/**
 * Original bytes of files, by key. Keys are slash-separated paths of plain segments
 * (`files/<collectionId>/<fileId>`) so that a whole folder can be removed at once.
 */
export abstract class BlobStore {
  /** Stores or replaces the blob; readers never see a half-written one. */
  abstract put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes, or null when there is no such blob. */
  abstract get(key: string): Promise<Buffer | null>;
  /** Removes the blob; no error when it is absent. */
  abstract delete(key: string): Promise<void>;
  /** Removes every blob whose key starts with `folder/`. */
  abstract deleteFolder(folder: string): Promise<void>;
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** Refuses keys that could escape the store's root (`..`, absolute paths, odd characters). */
export function assertBlobKey(key: string): void {
  const segments = key.split('/');
  if (key.length > 512 || segments.some((segment) => !SEGMENT.test(segment))) {
    throw new AppError(ErrorCode.INTERNAL, `Invalid blob key ${JSON.stringify(key)}`);
  }
}
