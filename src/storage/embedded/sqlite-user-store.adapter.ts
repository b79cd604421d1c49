import { Page, PageRequest } from '../../common/page';
import { User } from '../../domain/user.model';
import { ApiKey } from '../../domain/api-key.model';
import { UserStore } from '../../domain/user-store.port';
import { fromSqlDate, SqliteDb, toSqlDate } from './sqlite-database';

interface UserRow {
  id: string;
  name: string;
  email: string | null;
  is_admin: number;
  created_at: string;
}

interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const toUser = (row: UserRow): User => ({
  id: row.id,
  name: row.name,
  email: row.email,
  isAdmin: row.is_admin === 1,
  createdAt: new Date(row.created_at),
});

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  prefix: row.prefix,
  hash: row.hash,
  createdAt: new Date(row.created_at),
  lastUsedAt: fromSqlDate(row.last_used_at),
  revokedAt: fromSqlDate(row.revoked_at),
});

export class SqliteUserStore extends UserStore {
  private readonly statements;

  constructor(private readonly db: SqliteDb) {
    super();
    this.statements = {
      insertUser: db.prepare(
        'INSERT INTO users (id, name, email, is_admin, created_at) VALUES (@id, @name, @email, @is_admin, @created_at)',
      ),
      getUser: db.prepare('SELECT * FROM users WHERE id = ?'),
      listUsers: db.prepare('SELECT * FROM users ORDER BY created_at, id LIMIT ? OFFSET ?'),
      countUsers: db.prepare('SELECT COUNT(*) FROM users').pluck(),
      insertKey: db.prepare(
        `INSERT INTO api_keys (id, user_id, name, prefix, hash, created_at, last_used_at, revoked_at)
         VALUES (@id, @user_id, @name, @prefix, @hash, @created_at, @last_used_at, @revoked_at)`,
      ),
      getKey: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
      keyByHash: db.prepare('SELECT * FROM api_keys WHERE hash = ?'),
      listKeys: db.prepare('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id'),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      touchKey: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    };
  }

  async createUser(user: User): Promise<void> {
    this.statements.insertUser.run({
      id: user.id,
      name: user.name,
      email: user.email,
      is_admin: user.isAdmin ? 1 : 0,
      created_at: toSqlDate(user.createdAt),
    });
  }

  async getUser(id: string): Promise<User | null> {
    const row = this.statements.getUser.get(id) as UserRow | undefined;
    return row ? toUser(row) : null;
  }

  async listUsers(page: PageRequest): Promise<Page<User>> {
    const rows = this.statements.listUsers.all(page.limit, page.offset) as UserRow[];
    return { items: rows.map(toUser), total: this.statements.countUsers.get() as number };
  }

  async countUsers(): Promise<number> {
    return this.statements.countUsers.get() as number;
  }

  async createApiKey(key: ApiKey): Promise<void> {
    this.statements.insertKey.run({
      id: key.id,
      user_id: key.userId,
      name: key.name,
      prefix: key.prefix,
      hash: key.hash,
      created_at: toSqlDate(key.createdAt),
      last_used_at: toSqlDate(key.lastUsedAt),
      revoked_at: toSqlDate(key.revokedAt),
    });
  }

  async getApiKey(id: string): Promise<ApiKey | null> {
    const row = this.statements.getKey.get(id) as ApiKeyRow | undefined;
    return row ? toApiKey(row) : null;
  }

  async findApiKeyByHash(hash: string): Promise<ApiKey | null> {
    const row = this.statements.keyByHash.get(hash) as ApiKeyRow | undefined;
    return row ? toApiKey(row) : null;
  }

  async listApiKeys(userId: string): Promise<ApiKey[]> {
    return (this.statements.listKeys.all(userId) as ApiKeyRow[]).map(toApiKey);
  }

  async revokeApiKey(id: string, at: Date): Promise<boolean> {
    return this.statements.revokeKey.run(toSqlDate(at), id).changes > 0;
  }

  async touchApiKey(id: string, at: Date): Promise<void> {
    this.statements.touchKey.run(toSqlDate(at), id);
  }
}
