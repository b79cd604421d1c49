import { Connection, mongo } from 'mongoose';
import { finished } from 'node:stream/promises';
import { isDiskFull, mongoStorageFull } from '../../common/resource-faults';
import { assertBlobKey, BlobStore } from '../../domain/blob-store.port';

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Blobs in GridFS (bucket `blobs`) on the document store's MongoDB, the key being the file name. */
export class GridFsBlobStore extends BlobStore {
  private bucketPromise?: Promise<mongo.GridFSBucket>;

  constructor(private readonly connection: Connection) {
    super();
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    assertBlobKey(key);
    const bucket = await this.bucket();
    const upload = bucket.openUploadStream(key);
    upload.end(bytes);
    try {
      await finished(upload);
    } catch (error) {
      throw isDiskFull(error) ? mongoStorageFull(error) : error;
    }
    // The new version is complete before older ones go, so a reader always finds one whole blob.
    const older = await bucket.find({ filename: key, _id: { $ne: upload.id } }, { projection: { _id: 1 } }).toArray();
    await this.deleteIds(bucket, older);
  }

  async get(key: string): Promise<Buffer | null> {
    assertBlobKey(key);
    const bucket = await this.bucket();
    const [latest] = await bucket.find({ filename: key }).sort({ uploadDate: -1 }).limit(1).toArray();
    if (!latest) return null;
    const parts: Buffer[] = [];
    try {
      for await (const part of bucket.openDownloadStream(latest._id)) parts.push(part as Buffer);
    } catch (error) {
      // Deleted between find and read: the blob is gone, as for any other reader after a delete.
      if ((error as { code?: string }).code === 'ENOENT') return null;
      throw error;
    }
    return Buffer.concat(parts);
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    const bucket = await this.bucket();
    await this.deleteIds(bucket, await bucket.find({ filename: key }, { projection: { _id: 1 } }).toArray());
  }

  async deleteFolder(folder: string): Promise<void> {
    assertBlobKey(folder);
    const bucket = await this.bucket();
    const filter = { filename: { $regex: `^${escapeRegex(folder)}/` } };
    await this.deleteIds(bucket, await bucket.find(filter, { projection: { _id: 1 } }).toArray());
  }

  private async deleteIds(bucket: mongo.GridFSBucket, files: { _id: mongo.ObjectId }[]): Promise<void> {
    for (const file of files) {
      try {
        await bucket.delete(file._id);
      } catch (error) {
        // Another deleter got there first; the outcome is the same.
        if (!/not found/i.test((error as Error).message)) throw error;
      }
    }
  }

  private bucket(): Promise<mongo.GridFSBucket> {
    this.bucketPromise ??= this.connection
      .asPromise()
      .then((connection) => new mongo.GridFSBucket(connection.db!, { bucketName: 'blobs' }))
      .catch((error) => {
        // Not cached: the next call tries to connect again.
        this.bucketPromise = undefined;
        throw error;
      });
    return this.bucketPromise;
  }
}
