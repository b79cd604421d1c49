import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { newId } from '../common/ids';
import { loadConfig } from '../config/app-config';
import { BlobStore } from '../domain/blob-store.port';
import { JobQueue } from '../domain/job-queue.port';
import { FileFields } from '../domain/vector-index.port';
import { SqliteCollectionStore } from '../storage/embedded/sqlite-collection-store.adapter';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteFileStore } from '../storage/embedded/sqlite-file-store.adapter';
import { SqliteMembershipStore } from '../storage/embedded/sqlite-membership-store.adapter';
import { SqliteVectorIndex } from '../search-index/embedded/sqlite-vector-index.adapter';
import { FilesService } from './files.service';

/** An index that keeps file fields with its units: records what it is told. */
class FieldsIndex extends SqliteVectorIndex {
  readonly told: { collectionId: string; fileId: string; fields: FileFields }[] = [];
  override get filtersFileFields(): boolean {
    return true;
  }
  override async setFileFields(collectionId: string, fileId: string, fields: FileFields): Promise<void> {
    this.told.push({ collectionId, fileId, fields });
  }
}

describe('FilesService.patch', () => {
  let dir: string;
  let db: SqliteDb;
  const admin: Principal = { userId: 'usr_admin', keyId: null, isAdmin: true };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'files-service-'));
    db = openSqliteDatabase(dir);
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function setup(index: SqliteVectorIndex) {
    const files = new SqliteFileStore(db);
    const collections = new SqliteCollectionStore(db);
    const collectionId = newId('col');
    const now = new Date();
    await collections.create({
      id: collectionId,
      name: 'c',
      ownerId: admin.userId,
      createdAt: now,
      updatedAt: now,
      embeddingModel: null,
      embeddingDimension: null,
    });
    const fileId = newId('fle');
    await files.create({
      id: fileId,
      collectionId,
      name: 'lease.pdf',
      mime: 'application/pdf',
      size: 42,
      status: 'indexed',
      error: null,
      lane: 'standard',
      progress: null,
      sourceUrl: null,
      chunkCount: 1,
      characterCount: 1,
      metadata: { year: 2021, kind: 'lease' },
      pages: 2,
      title: 'Lease',
      author: null,
      createdAt: now,
      updatedAt: now,
    });
    // Neither blobs nor the queue take part in a metadata change.
    const service = new FilesService(
      new AccessPolicy(new SqliteMembershipStore(db)),
      files,
      {} as BlobStore,
      index,
      {} as JobQueue,
      loadConfig({ DATA_DIR: dir }),
    );
    return { service, collectionId, fileId, now };
  }

  it("replaces the file's fields in an index that filters on them, with the patched metadata", async () => {
    const index = new FieldsIndex(db);
    const { service, collectionId, fileId, now } = await setup(index);
    const view = await service.patch(admin, collectionId, fileId, { metadata: { year: 2024, draft: true, kind: null } });
    expect(view.metadata).toEqual({ year: 2024, draft: true });
    expect(index.told).toEqual([
      {
        collectionId,
        fileId,
        fields: {
          name: 'lease.pdf',
          type: 'application/pdf',
          size: 42,
          pages: 2,
          title: 'Lease',
          author: null,
          createdAt: now,
          metadata: { year: 2024, draft: true },
        },
      },
    ]);
  });

  it('tells an index that takes file ids nothing', async () => {
    const index = new SqliteVectorIndex(db);
    const setFileFields = jest.spyOn(index, 'setFileFields');
    const { service, collectionId, fileId } = await setup(index);
    await service.patch(admin, collectionId, fileId, { metadata: { year: 2024 } });
    expect(setFileFields).not.toHaveBeenCalled();
  });
});
