import { Connection, Model } from 'mongoose';
import { OAuthRecord, OAuthStore } from '../../domain/oauth-store.port';
import { OAuthDoc, oauthModels } from './oauth.schema';

const toRecord = (doc: OAuthDoc): OAuthRecord => ({
  kind: doc.kind,
  idHash: doc.idHash,
  payload: doc.payload,
  grantHash: doc.grantHash ?? null,
  uidHash: doc.uidHash ?? null,
  userCodeHash: doc.userCodeHash ?? null,
  expiresAt: doc.expiresAt ?? null,
  consumedAt: doc.consumedAt ?? null,
});

const live = (now: Date) => ({ $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });

export class MongoOAuthStore extends OAuthStore {
  private readonly records: Model<OAuthDoc>;

  constructor(connection: Connection) {
    super();
    this.records = oauthModels(connection).records;
  }

  async upsert(record: OAuthRecord): Promise<void> {
    await this.records.replaceOne({ kind: record.kind, idHash: record.idHash }, record, { upsert: true });
  }

  async find(kind: string, idHash: string, now: Date): Promise<OAuthRecord | null> {
    const doc = await this.records.findOne({ kind, idHash, ...live(now) }).lean<OAuthDoc>();
    return doc ? toRecord(doc) : null;
  }

  async findBy(kind: string, field: 'uidHash' | 'userCodeHash', hash: string, now: Date): Promise<OAuthRecord | null> {
    const doc = await this.records.findOne({ kind, [field]: hash, ...live(now) }).lean<OAuthDoc>();
    return doc ? toRecord(doc) : null;
  }

  async consume(kind: string, idHash: string, at: Date): Promise<boolean> {
    return (await this.records.updateOne({ kind, idHash }, { $set: { consumedAt: at } })).matchedCount > 0;
  }

  async destroy(kind: string, idHash: string): Promise<void> {
    await this.records.deleteOne({ kind, idHash });
  }

  async revokeByGrant(grantHash: string): Promise<number> {
    return (await this.records.deleteMany({ grantHash })).deletedCount;
  }
}
