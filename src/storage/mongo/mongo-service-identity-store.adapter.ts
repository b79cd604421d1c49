import { Connection } from 'mongoose';
import { ServiceIdentityStore } from '../../domain/service-identity.port';
import { isDuplicateKey } from './mongo-connection';

interface IdentityDoc {
  _id: string;
  value: string;
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

  async replace(key: string, value: string): Promise<string | null> {
    const before = await this.collection.findOneAndUpdate({ _id: key }, { $set: { value } }, { upsert: true, returnDocument: 'before' });
    return before?.value ?? null;
  }
}
