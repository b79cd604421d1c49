import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { insufficientStorage, isDiskFull } from '../../common/resource-faults';
import { assertBlobKey, BlobStore } from '../../domain/blob-store.port';

/** Blobs as files under one root folder (`DATA_DIR/blobs`), the key being the relative path. */
export class FilesystemBlobStore extends BlobStore {
  constructor(private readonly root: string) {
    super();
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true }).catch(async (error: unknown) => {
      throw isDiskFull(error) ? await insufficientStorage({ path: this.root, bytesNeeded: bytes.length }, error) : error;
    });
    // Write beside, then rename: a crash mid-write leaves a stray temp file, never a truncated blob.
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(temporary, bytes, { mode: 0o600 });
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      // A full disk is the operator's to fix: say where, and how much the write needed.
      if (isDiskFull(error)) throw await insufficientStorage({ path: this.root, bytesNeeded: bytes.length }, error);
      throw error;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deleteFolder(folder: string): Promise<void> {
    await rm(this.pathOf(folder), { recursive: true, force: true });
  }

  private pathOf(key: string): string {
    assertBlobKey(key);
    return join(this.root, ...key.split('/'));
  }
}
