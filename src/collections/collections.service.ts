import { Injectable } from '@nestjs/common';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { AppError } from '../common/app-error';
import { newId } from '../common/ids';
import { validateInput } from '../common/input-validation';
import { Page, PageRequest } from '../common/page';
import { validPage } from '../common/pagination';
import { VectorIndex } from '../domain/vector-index.port';
import { BlobStore } from '../domain/blob-store.port';
import { Collection } from '../domain/collection.model';
import { CollectionStore } from '../domain/collection-store.port';
import { collectionBlobFolder, FileStore } from '../domain/file-store.port';
import { FileContentStats } from '../domain/file.model';
import { collectionView, CollectionView, CreateCollectionDto } from './collections.dto';

export interface CollectionStats extends FileContentStats {
  collectionId: string;
}

/** Collections as both doors (REST and MCP) see them; every method checks the caller's role. */
@Injectable()
export class CollectionsService {
  constructor(
    private readonly collections: CollectionStore,
    private readonly access: AccessPolicy,
    private readonly files: FileStore,
    private readonly blobs: BlobStore,
    private readonly index: VectorIndex,
  ) {}

  /** Checked with CreateCollectionDto, which both doors check too: whoever calls, one set of rules and messages. */
  async create(principal: Principal, name: string): Promise<CollectionView> {
    const input = validateInput(CreateCollectionDto, { name });
    const now = new Date();
    const collection: Collection = {
      id: newId('col'),
      name: input.name,
      ownerId: principal.userId,
      createdAt: now,
      updatedAt: now,
      embeddingModel: null,
      embeddingDimension: null,
    };
    await this.collections.create(collection);
    return collectionView(collection, 'owner');
  }

  async list(principal: Principal, page: PageRequest): Promise<Page<CollectionView>> {
    // Memberships are the rights: the store lists only collections the user holds a role on.
    const result = await this.collections.listVisible(principal.userId, validPage(page));
    return { items: result.items.map((c) => collectionView(c, c.role)), total: result.total };
  }

  async get(principal: Principal, id: string): Promise<CollectionView> {
    const role = await this.access.require(principal, 'collection', id, 'viewer');
    return collectionView(await this.load(id), role);
  }

  /** Removes the collection with its files, passages, vectors and original bytes. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.access.require(principal, 'collection', id, 'owner');
    // Content first and the collection last: if this is interrupted, the collection is still
    // there to be deleted again, instead of content left behind that nothing points to.
    await this.files.deleteByCollection(id);
    await this.index.deleteByCollection(id);
    await this.blobs.deleteFolder(collectionBlobFolder(id));
    await this.collections.delete(id);
  }

  /** Files by status, original bytes, passages (`chunks`) and characters of extracted text. */
  async stats(principal: Principal, id: string): Promise<CollectionStats> {
    await this.access.require(principal, 'collection', id, 'viewer');
    return { collectionId: id, ...(await this.files.stats(id)) };
  }

  private async load(id: string): Promise<Collection> {
    const collection = await this.collections.get(id);
    if (!collection) throw AppError.notFound('collection', id);
    return collection;
  }
}
