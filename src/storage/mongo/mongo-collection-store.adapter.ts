import { Connection, Model } from 'mongoose';
import { Page, PageRequest } from '../../common/pagination';
import { Collection, CollectionStore, VisibleCollection } from '../ports/collection-store.port';
import { Role } from '../ports/membership-store.port';
import { CollectionDoc, foundationModels, MembershipDoc } from './foundation.schema';

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
  private readonly memberships: Model<MembershipDoc>;

  constructor(connection: Connection) {
    super();
    const models = foundationModels(connection);
    this.collections = models.collections;
    this.memberships = models.memberships;
  }

  async create(c: Collection): Promise<void> {
    await this.collections.create({ _id: c.id, ...c });
    try {
      await this.memberships.create({
        resourceType: 'collection',
        resourceId: c.id,
        userId: c.ownerId,
        role: 'owner',
        createdAt: c.createdAt,
      });
    } catch (error) {
      // Without its owner membership the collection would be invisible to everyone: undo it.
      await this.collections.deleteOne({ _id: c.id });
      throw error;
    }
  }

  async get(id: string): Promise<Collection | null> {
    const doc = await this.collections.findById(id).lean<CollectionDoc>();
    return doc ? toCollection(doc) : null;
  }

  async listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCollection>> {
    const roles = await this.memberships
      .find({ resourceType: 'collection', userId }, { resourceId: 1, role: 1 })
      .lean<MembershipDoc[]>();
    const roleById = new Map(roles.map((m) => [m.resourceId, m.role as Role]));
    const ids = [...roleById.keys()];
    const [docs, total] = await Promise.all([
      this.collections
        .find({ _id: { $in: ids } })
        .sort({ createdAt: -1, _id: -1 })
        .skip(page.offset)
        .limit(page.limit)
        .lean<CollectionDoc[]>(),
      this.collections.countDocuments({ _id: { $in: ids } }),
    ]);
    return { items: docs.map((doc) => ({ ...toCollection(doc), role: roleById.get(doc._id)! })), total };
  }

  async delete(id: string): Promise<boolean> {
    await this.memberships.deleteMany({ resourceType: 'collection', resourceId: id });
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
