import { Page, PageRequest } from '../../common/page';
import type { Credential, CredentialType, VisibleCredential } from '../../domain/credential.model';
import { CredentialStore } from '../../domain/credential-store.port';
import { SqliteDb, toSqlDate } from './sqlite-database';
import { SqliteMembershipScope } from './sqlite-membership-store.adapter';

interface CredentialRow {
  id: string;
  name: string;
  type: CredentialType;
  owner_id: string;
  settings: string;
  sealed: string;
  created_at: string;
  updated_at: string;
}

const toCredential = (row: CredentialRow): Credential => ({
  id: row.id,
  name: row.name,
  type: row.type,
  ownerId: row.owner_id,
  settings: JSON.parse(row.settings) as Record<string, string>,
  sealed: row.sealed,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

export class SqliteCredentialStore extends CredentialStore {
  private readonly statements;
  private readonly members: SqliteMembershipScope<CredentialRow>;
  private readonly createTx;
  private readonly deleteTx;

  constructor(db: SqliteDb) {
    super();
    this.members = new SqliteMembershipScope<CredentialRow>(db, 'credential', 'credentials');
    this.statements = {
      insert: db.prepare(
        `INSERT INTO credentials (id, name, type, owner_id, settings, sealed, created_at, updated_at)
         VALUES (@id, @name, @type, @owner_id, @settings, @sealed, @created_at, @updated_at)`,
      ),
      get: db.prepare('SELECT * FROM credentials WHERE id = ?'),
      update: db.prepare(
        'UPDATE credentials SET name = @name, settings = @settings, sealed = @sealed, updated_at = @updated_at WHERE id = @id',
      ),
      delete: db.prepare('DELETE FROM credentials WHERE id = ?'),
    };
    this.createTx = db.transaction((c: Credential) => {
      this.statements.insert.run({
        id: c.id,
        name: c.name,
        type: c.type,
        owner_id: c.ownerId,
        settings: JSON.stringify(c.settings),
        sealed: c.sealed,
        created_at: toSqlDate(c.createdAt),
        updated_at: toSqlDate(c.updatedAt),
      });
      this.members.insertOwner(c.id, c.ownerId, c.createdAt);
    });
    this.deleteTx = db.transaction((id: string) => {
      this.members.deleteMembers(id);
      return this.statements.delete.run(id).changes > 0;
    });
  }

  async create(credential: Credential): Promise<void> {
    this.createTx(credential);
  }

  async get(id: string): Promise<Credential | null> {
    const row = this.statements.get.get(id) as CredentialRow | undefined;
    return row ? toCredential(row) : null;
  }

  async listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCredential>> {
    return this.members.visible(userId, page, toCredential);
  }

  async update(id: string, changes: Pick<Credential, 'name' | 'settings' | 'sealed' | 'updatedAt'>): Promise<boolean> {
    const params = {
      id,
      name: changes.name,
      settings: JSON.stringify(changes.settings),
      sealed: changes.sealed,
      updated_at: toSqlDate(changes.updatedAt),
    };
    return this.statements.update.run(params).changes > 0;
  }

  async delete(id: string): Promise<boolean> {
    return this.deleteTx(id);
  }
}
