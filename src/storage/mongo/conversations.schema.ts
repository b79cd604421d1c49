import { Connection, Schema } from 'mongoose';
import type { ConversationMessage } from '../../domain/conversation.model';

/** A remembered conversation, keyed by its key as `_id`; MongoDB deletes it once `expiresAt` passed (TTL index). */
export interface ConversationDoc {
  _id: string;
  messages: ConversationMessage[];
  updatedAt: Date;
  expiresAt: Date;
}

const messageSchema = new Schema<ConversationMessage>(
  { role: { type: String, required: true }, content: { type: String, default: '' } },
  { _id: false, versionKey: false },
);

const conversationSchema = new Schema<ConversationDoc>(
  {
    _id: { type: String, required: true },
    messages: { type: [messageSchema], default: [] },
    updatedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false, _id: false },
);
// The TTL monitor runs about once a minute: reads check `expiresAt` themselves.
conversationSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

export function conversationModels(connection: Connection) {
  return {
    conversations:
      connection.models.AgentConversation ??
      connection.model<ConversationDoc>('AgentConversation', conversationSchema, 'agent_conversations'),
  };
}
