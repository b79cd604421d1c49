import { Connection, Model } from 'mongoose';
import { Page, PageRequest } from '../../common/page';
import { User } from '../../domain/user.model';
import { ApiKey } from '../../domain/api-key.model';
import { UserStore } from '../../domain/user-store.port';
import { ApiKeyDoc, foundationModels, UserDoc } from './foundation.schema';

const toUser = (doc: UserDoc): User => ({
  id: doc._id,
  name: doc.name,
  email: doc.email ?? null,
  isAdmin: doc.isAdmin,
  createdAt: doc.createdAt,
});

const toApiKey = (doc: ApiKeyDoc): ApiKey => ({
  id: doc._id,
  userId: doc.userId,
  name: doc.name,
  prefix: doc.prefix,
  hash: doc.hash,
  createdAt: doc.createdAt,
  lastUsedAt: doc.lastUsedAt ?? null,
  revokedAt: doc.revokedAt ?? null,
});

export class MongoUserStore extends UserStore {
  private readonly users: Model<UserDoc>;
  private readonly keys: Model<ApiKeyDoc>;

  constructor(connection: Connection) {
    super();
    const models = foundationModels(connection);
    this.users = models.users;
    this.keys = models.apiKeys;
  }

  async createUser(user: User): Promise<void> {
    await this.users.create({ _id: user.id, ...user });
  }

  async getUser(id: string): Promise<User | null> {
    const doc = await this.users.findById(id).lean<UserDoc>();
    return doc ? toUser(doc) : null;
  }

  async listUsers(page: PageRequest): Promise<Page<User>> {
    const [docs, total] = await Promise.all([
      this.users.find().sort({ createdAt: 1, _id: 1 }).skip(page.offset).limit(page.limit).lean<UserDoc[]>(),
      this.users.countDocuments(),
    ]);
    return { items: docs.map(toUser), total };
  }

  async countUsers(): Promise<number> {
    return this.users.estimatedDocumentCount();
  }

  async createApiKey(key: ApiKey): Promise<void> {
    await this.keys.create({ _id: key.id, ...key });
  }

  async getApiKey(id: string): Promise<ApiKey | null> {
    const doc = await this.keys.findById(id).lean<ApiKeyDoc>();
    return doc ? toApiKey(doc) : null;
  }

  async findApiKeyByHash(hash: string): Promise<ApiKey | null> {
    const doc = await this.keys.findOne({ hash }).lean<ApiKeyDoc>();
    return doc ? toApiKey(doc) : null;
  }

  async listApiKeys(userId: string): Promise<ApiKey[]> {
    const docs = await this.keys.find({ userId }).sort({ createdAt: 1, _id: 1 }).lean<ApiKeyDoc[]>();
    return docs.map(toApiKey);
  }

  async revokeApiKey(id: string, at: Date): Promise<boolean> {
    const result = await this.keys.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
    return result.modifiedCount > 0;
  }

  async touchApiKey(id: string, at: Date): Promise<void> {
    await this.keys.updateOne({ _id: id }, { $set: { lastUsedAt: at } });
  }
}
