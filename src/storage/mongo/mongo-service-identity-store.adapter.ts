import { Connection } from 'mongoose';
import { ServiceIdentityStore } from '../../domain/service-identity.port';
import { isDuplicateKey } from './mongo-connection';

interface IdentityDoc {
  _id: string;
  value: string;
  /** When the lease of a held key (`queue`) runs out, in ms since the epoch. */
  until?: number;
}

/** One document per key in `service_identity`. */
export class MongoServiceIdentityStore extends ServiceIdentityStore {
  constructor(private readonly connection: Connection) {
    super();
  }

  private get collection() {
    return this.connection.db!.collection<IdentityDoc>('service_identity');
  }

  async claim(key: string, value: string): Promise<string> {
    try {
      const doc = await this.collection.findOneAndUpdate(
        { _id: key },
        { $setOnInsert: { value } },
        { upsert: true, returnDocument: 'after' },
      );
      return doc?.value ?? value;
    } catch (error) {
      // Two processes inserted at once: the other one's value stands.
      if (!isDuplicateKey(error)) throw error;
      return (await this.collection.findOne({ _id: key }))?.value ?? value;
    }
  }

  async hold(key: string, value: string, leaseMs: number): Promise<string> {
    const now = Date.now();
    try {
      // Matches the key held for this value or under a lease that ran out; else the upsert collides.
      await this.collection.updateOne(
        { _id: key, $or: [{ value }, { until: { $not: { $gt: now } } }] },
        { $set: { value, until: now + leaseMs } },
        { upsert: true },
      );
      return value;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      return (await this.collection.findOne({ _id: key }))?.value ?? value;
    }
  }
}
