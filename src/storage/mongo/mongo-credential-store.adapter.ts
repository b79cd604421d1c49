import { Connection, Model } from 'mongoose';
import { Page, PageRequest } from '../../common/page';
import type { Credential, CredentialUse, VisibleCredential } from '../../domain/credential.model';
import { CredentialStore } from '../../domain/credential-store.port';
import { CredentialDoc, credentialModels, CredentialUseDoc } from './credentials.schema';
import { MongoMembershipScope } from './mongo-membership-store.adapter';

const toCredential = (doc: CredentialDoc): Credential => ({
  id: doc._id,
  name: doc.name,
  type: doc.type,
  ownerId: doc.ownerId,
  settings: JSON.parse(doc.settingsJson) as Record<string, string>,
  allowedHosts: doc.allowedHosts ?? [],
  sealed: doc.sealed,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

export class MongoCredentialStore extends CredentialStore {
  private readonly credentials: Model<CredentialDoc>;
  private readonly uses: Model<CredentialUseDoc>;
  private readonly members: MongoMembershipScope;

  constructor(connection: Connection) {
    super();
    const models = credentialModels(connection);
    this.credentials = models.credentials;
    this.uses = models.uses;
    this.members = new MongoMembershipScope(connection, 'credential');
  }

  async create(c: Credential): Promise<void> {
    const { id, settings, ...fields } = c;
    await this.members.createOwned(
      this.credentials,
      { _id: id, ...fields, settingsJson: JSON.stringify(settings) },
      c.ownerId,
      c.createdAt,
    );
  }

  async get(id: string): Promise<Credential | null> {
    const doc = await this.credentials.findById(id).lean<CredentialDoc>();
    return doc ? toCredential(doc) : null;
  }

  async listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCredential>> {
    return this.members.visible(userId, page, this.credentials, toCredential);
  }

  async update(id: string, changes: Pick<Credential, 'name' | 'settings' | 'allowedHosts' | 'sealed' | 'updatedAt'>): Promise<boolean> {
    const result = await this.credentials.updateOne(
      { _id: id },
      {
        $set: {
          name: changes.name,
          settingsJson: JSON.stringify(changes.settings),
          allowedHosts: changes.allowedHosts,
          sealed: changes.sealed,
          updatedAt: changes.updatedAt,
        },
      },
    );
    return result.matchedCount > 0;
  }

  async delete(id: string): Promise<boolean> {
    await this.members.deleteMembers(id);
    await this.uses.deleteMany({ credentialId: id });
    return (await this.credentials.deleteOne({ _id: id })).deletedCount > 0;
  }

  async recordUse(use: CredentialUse): Promise<void> {
    await this.uses.create(use);
  }

  async listUses(credentialId: string, page: PageRequest): Promise<Page<CredentialUse>> {
    const [docs, total] = await Promise.all([
      this.uses
        .find({ credentialId })
        .sort({ at: -1, _id: -1 })
        .skip(page.offset)
        .limit(page.limit)
        .lean<(CredentialUseDoc & { _id: unknown })[]>(),
      this.uses.countDocuments({ credentialId }),
    ]);
    return {
      items: docs.map(({ credentialId: id, userId, at, host, kind, runId, allowed }) => ({
        credentialId: id,
        userId,
        at,
        host,
        kind,
        runId: runId ?? null,
        allowed,
      })),
      total,
    };
  }
}
