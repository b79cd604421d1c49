import { Connection, Model } from 'mongoose';
import { Membership, MembershipStore, ResourceType, Role } from '../ports/membership-store.port';
import { foundationModels, MembershipDoc } from './foundation.schema';

export class MongoMembershipStore extends MembershipStore {
  private readonly memberships: Model<MembershipDoc>;

  constructor(connection: Connection) {
    super();
    this.memberships = foundationModels(connection).memberships;
  }

  async getRole(resourceType: ResourceType, resourceId: string, userId: string): Promise<Role | null> {
    const doc = await this.memberships.findOne({ resourceType, resourceId, userId }).lean<MembershipDoc>();
    return (doc?.role as Role | undefined) ?? null;
  }

  async setRole(m: Membership): Promise<void> {
    await this.memberships.updateOne(
      { resourceType: m.resourceType, resourceId: m.resourceId, userId: m.userId },
      { $set: { role: m.role }, $setOnInsert: { createdAt: m.createdAt } },
      { upsert: true },
    );
  }

  async remove(resourceType: ResourceType, resourceId: string, userId: string): Promise<boolean> {
    const result = await this.memberships.deleteOne({ resourceType, resourceId, userId });
    return result.deletedCount > 0;
  }

  async list(resourceType: ResourceType, resourceId: string): Promise<Membership[]> {
    const docs = await this.memberships
      .find({ resourceType, resourceId })
      .sort({ createdAt: 1, userId: 1 })
      .lean<MembershipDoc[]>();
    return docs.map((doc) => ({
      resourceType: doc.resourceType as ResourceType,
      resourceId: doc.resourceId,
      userId: doc.userId,
      role: doc.role as Role,
      createdAt: doc.createdAt,
    }));
  }

  async removeAll(resourceType: ResourceType, resourceId: string): Promise<void> {
    await this.memberships.deleteMany({ resourceType, resourceId });
  }

  async listForUser(resourceType: ResourceType, userId: string): Promise<Map<string, Role>> {
    const docs = await this.memberships.find({ resourceType, userId }, { resourceId: 1, role: 1 }).lean<MembershipDoc[]>();
    return new Map(docs.map((doc) => [doc.resourceId, doc.role as Role]));
  }
}
