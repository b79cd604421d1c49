import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig } from '../config/app-config';
import { FilesystemBlobStore } from './embedded/filesystem-blob-store.adapter';
import { SqliteFileStore } from './embedded/sqlite-file-store.adapter';
import { BlobStore } from '../domain/blob-store.port';
import { FileStore } from '../domain/file-store.port';
import { StorageConnections, storeProvider } from './storage-connections';
import { StorageModule } from './storage.module';

/**
 * Stores of collection content: file records with their passages, and the original bytes, on the
 * connections StorageModule opens.
 */
@Module({
  imports: [StorageModule],
  providers: [
    storeProvider(
      FileStore,
      (db) => new SqliteFileStore(db),
      async (c) => new (await import('./mongo/mongo-file-store.adapter')).MongoFileStore(c),
    ),
    {
      provide: BlobStore,
      inject: [StorageConnections, AppConfig],
      useFactory: async (connections: StorageConnections, config: AppConfig): Promise<BlobStore> =>
        connections.usesMongo
          ? new (await import('./mongo/gridfs-blob-store.adapter')).GridFsBlobStore(await connections.mongoReady())
          : new FilesystemBlobStore(join(config.dataDir, 'blobs')),
    },
  ],
  exports: [FileStore, BlobStore],
})
export class ContentStorageModule {}
