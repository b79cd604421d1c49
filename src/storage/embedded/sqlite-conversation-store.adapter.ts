import { AppendOptions, ConversationStore } from '../../domain/conversation-store.port';
import { ConversationMessage } from '../../domain/conversation.model';
import { SqliteDb, toSqlDate } from './sqlite-database';

interface ConversationRow {
  messages: string;
  expires_at: string;
}

export class SqliteConversationStore extends ConversationStore {
  private readonly statements;
  private readonly appendTx;

  constructor(db: SqliteDb) {
    super();
    this.statements = {
      get: db.prepare<[string], ConversationRow>('SELECT messages, expires_at FROM agent_conversations WHERE key = ?'),
      upsert: db.prepare(
        `INSERT INTO agent_conversations (key, messages, updated_at, expires_at) VALUES (@key, @messages, @now, @expires_at)
         ON CONFLICT (key) DO UPDATE SET messages = excluded.messages, updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
      ),
      forget: db.prepare('DELETE FROM agent_conversations WHERE key = ?'),
      // Expired conversations go as others are written: nothing else reads them.
      expire: db.prepare('DELETE FROM agent_conversations WHERE expires_at <= ?'),
    };
    this.appendTx = db.transaction((key: string, added: readonly ConversationMessage[], options: AppendOptions) => {
      const now = toSqlDate(options.now);
      const kept = this.live(this.statements.get.get(key), options.now);
      const messages = [...kept, ...added].slice(-Math.max(1, options.window));
      this.statements.upsert.run({ key, messages: JSON.stringify(messages), now, expires_at: toSqlDate(options.expiresAt) });
      this.statements.expire.run(now);
    });
  }

  async messages(key: string, now: Date): Promise<ConversationMessage[]> {
    return this.live(this.statements.get.get(key), now);
  }

  async append(key: string, messages: readonly ConversationMessage[], options: AppendOptions): Promise<void> {
    this.appendTx(key, messages, options);
  }

  async forget(key: string): Promise<boolean> {
    return this.statements.forget.run(key).changes > 0;
  }

  private live(row: ConversationRow | undefined, now: Date): ConversationMessage[] {
    if (!row || new Date(row.expires_at).getTime() <= now.getTime()) return [];
    return JSON.parse(row.messages) as ConversationMessage[];
  }
}
