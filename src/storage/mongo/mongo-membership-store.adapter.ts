import { Connection, Model } from 'mongoose';
import { Page, PageRequest } from '../../common/page';
import { Membership, ResourceType, Role } from '../../domain/membership.model';
import { MembershipStore } from '../../domain/membership-store.port';
import { foundationModels, MembershipDoc } from './foundation.schema';

export class MongoMembershipStore extends MembershipStore {
  private readonly memberships: Model<MembershipDoc>;

  constructor(connection: Connection) {
    super();
    this.memberships = foundationModels(connection).memberships;
  }

  getRole(resourceType: ResourceType, resourceId: string, userId: string): Promise<Role | null> {
    return roleOf(this.memberships, resourceType, resourceId, userId);
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
    const docs = await this.memberships.find({ resourceType, resourceId }).sort({ createdAt: 1, userId: 1 }).lean<MembershipDoc[]>();
    return docs.map((doc) => ({
      resourceType: doc.resourceType as ResourceType,
      resourceId: doc.resourceId,
      userId: doc.userId,
      role: doc.role as Role,
      createdAt: doc.createdAt,
    }));
  }

  async listForUser(resourceType: ResourceType, userId: string): Promise<Map<string, Role>> {
    return rolesOf(this.memberships, resourceType, userId);
  }
}

async function roleOf(
  memberships: Model<MembershipDoc>,
  resourceType: ResourceType,
  resourceId: string,
  userId: string,
): Promise<Role | null> {
  const doc = await memberships.findOne({ resourceType, resourceId, userId }, { role: 1 }).lean<MembershipDoc>();
  return (doc?.role as Role | undefined) ?? null;
}

async function rolesOf(memberships: Model<MembershipDoc>, resourceType: ResourceType, userId: string): Promise<Map<string, Role>> {
  const docs = await memberships.find({ resourceType, userId }, { resourceId: 1, role: 1 }).lean<MembershipDoc[]>();
  return new Map(docs.map((doc) => [doc.resourceId, doc.role as Role]));
}

/**
 * What a collection of shared resources (collections, workflows) does through the memberships
 * collection: create a resource with its creator as owner, page through what a user may see with
 * their role, and forget the members of a deleted resource.
 */
export class MongoMembershipScope {
  private readonly memberships: Model<MembershipDoc>;

  constructor(
    connection: Connection,
    private readonly resourceType: ResourceType,
  ) {
    this.memberships = foundationModels(connection).memberships;
  }

  /** Inserts the resource, then its owner membership; without it the resource would be invisible to everyone, so it is undone. */
  async createOwned<Doc extends { _id: string }>(resources: Model<Doc>, resource: Doc, ownerId: string, createdAt: Date): Promise<void> {
    await resources.create(resource);
    try {
      await this.memberships.create({
        resourceType: this.resourceType,
        resourceId: resource._id,
        userId: ownerId,
        role: 'owner',
        createdAt,
      });
    } catch (error) {
      await resources.deleteOne({ _id: resource._id });
      throw error;
    }
  }

  /** The user's role on one resource of this type, null when none. */
  role(resourceId: string, userId: string): Promise<Role | null> {
    return roleOf(this.memberships, this.resourceType, resourceId, userId);
  }

  /** The user's roles on resources of this type, by resource id. */
  roles(userId: string): Promise<Map<string, Role>> {
    return rolesOf(this.memberships, this.resourceType, userId);
  }

  /** The page of `resources` the user holds a role on, newest first, each with that role. */
  async visible<Doc extends { _id: string }, T>(
    userId: string,
    page: PageRequest,
    resources: Model<Doc>,
    toRecord: (doc: Doc) => T,
  ): Promise<Page<T & { role: Role }>> {
    const roleById = await this.roles(userId);
    const ids = [...roleById.keys()];
    const [docs, total] = await Promise.all([
      resources
        .find({ _id: { $in: ids } })
        .sort({ createdAt: -1, _id: -1 })
        .skip(page.offset)
        .limit(page.limit)
        .lean<Doc[]>(),
      resources.countDocuments({ _id: { $in: ids } }),
    ]);
    return { items: docs.map((doc) => ({ ...toRecord(doc), role: roleById.get(doc._id)! })), total };
  }

  async deleteMembers(resourceId: string): Promise<void> {
    await this.memberships.deleteMany({ resourceType: this.resourceType, resourceId });
  }
}
