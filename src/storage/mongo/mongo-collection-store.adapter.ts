import { Connection, Model } from 'mongoose';
import { Page, PageRequest } from '../../common/page';
import { Collection, VisibleCollection } from '../../domain/collection.model';
import { CollectionStore } from '../../domain/collection-store.port';
import { CollectionDoc, foundationModels } from './foundation.schema';
import { MongoMembershipScope } from './mongo-membership-store.adapter';

const toCollection = (doc: CollectionDoc): Collection => ({
  id: doc._id,
  name: doc.name,
  ownerId: doc.ownerId,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
  embeddingModel: doc.embeddingModel ?? null,
  embeddingDimension: doc.embeddingDimension ?? null,
});

export class MongoCollectionStore extends CollectionStore {
  private readonly collections: Model<CollectionDoc>;
  private readonly members: MongoMembershipScope;

  constructor(connection: Connection) {
    super();
    this.collections = foundationModels(connection).collections;
    this.members = new MongoMembershipScope(connection, 'collection');
  }

  async create(c: Collection): Promise<void> {
    await this.members.createOwned(this.collections, { _id: c.id, ...c }, c.ownerId, c.createdAt);
  }

  async get(id: string): Promise<Collection | null> {
    const doc = await this.collections.findById(id).lean<CollectionDoc>();
    return doc ? toCollection(doc) : null;
  }

  async listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCollection>> {
    return this.members.visible(userId, page, this.collections, toCollection);
  }

  async delete(id: string): Promise<boolean> {
    await this.members.deleteMembers(id);
    const result = await this.collections.deleteOne({ _id: id });
    return result.deletedCount > 0;
  }

  async claimEmbedding(id: string, model: string, dimension: number): Promise<{ model: string; dimension: number }> {
    await this.collections.updateOne(
      { _id: id, embeddingModel: null },
      { $set: { embeddingModel: model, embeddingDimension: dimension, updatedAt: new Date() } },
    );
    const doc = await this.collections.findById(id).lean<CollectionDoc>();
    if (!doc || doc.embeddingModel == null || doc.embeddingDimension == null) return { model, dimension };
    return { model: doc.embeddingModel, dimension: doc.embeddingDimension };
  }
}
