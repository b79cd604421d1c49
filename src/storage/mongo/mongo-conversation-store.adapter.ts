import { Connection, Model } from 'mongoose';
import { AppendOptions, ConversationStore } from '../../domain/conversation-store.port';
import { ConversationMessage } from '../../domain/conversation.model';
import { ConversationDoc, conversationModels } from './conversations.schema';

export class MongoConversationStore extends ConversationStore {
  private readonly conversations: Model<ConversationDoc>;

  constructor(connection: Connection) {
    super();
    this.conversations = conversationModels(connection).conversations;
  }

  async messages(key: string, now: Date): Promise<ConversationMessage[]> {
    const doc = await this.conversations.findOne({ _id: key, expiresAt: { $gt: now } }).lean<ConversationDoc>();
    return doc ? doc.messages.map(({ role, content }) => ({ role, content })) : [];
  }

  async append(key: string, messages: readonly ConversationMessage[], options: AppendOptions): Promise<void> {
    // Expired but not yet removed by the TTL monitor: it starts again empty.
    await this.conversations.deleteOne({ _id: key, expiresAt: { $lte: options.now } });
    const update = () =>
      this.conversations.updateOne(
        { _id: key },
        {
          $push: { messages: { $each: messages.map(({ role, content }) => ({ role, content })), $slice: -Math.max(1, options.window) } },
          $set: { updatedAt: options.now, expiresAt: options.expiresAt },
        },
        { upsert: true },
      );
    try {
      await update();
    } catch (error) {
      // Two first appends raced to insert the key: the loser's update now finds it.
      if ((error as { code?: number }).code !== 11000) throw error;
      await update();
    }
  }

  async forget(key: string): Promise<boolean> {
    return (await this.conversations.deleteOne({ _id: key })).deletedCount > 0;
  }
}
