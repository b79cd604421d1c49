import { Page, PageRequest } from '../../common/page';
import type { Credential, CredentialType, CredentialUse, CredentialUseKind, VisibleCredential } from '../../domain/credential.model';
import { CredentialStore } from '../../domain/credential-store.port';
import { SqliteDb, toSqlDate } from './sqlite-database';
import { SqliteMembershipScope } from './sqlite-membership-store.adapter';

interface CredentialRow {
  id: string;
  name: string;
  type: CredentialType;
  owner_id: string;
  settings: string;
  allowed_hosts: string;
  sealed: string;
  created_at: string;
  updated_at: string;
}

interface UseRow {
  credential_id: string;
  user_id: string;
  at: string;
  host: string;
  kind: CredentialUseKind;
  run_id: string | null;
  allowed: number;
}

const toUse = (row: UseRow): CredentialUse => ({
  credentialId: row.credential_id,
  userId: row.user_id,
  at: new Date(row.at),
  host: row.host,
  kind: row.kind,
  runId: row.run_id,
  allowed: row.allowed === 1,
});

const toCredential = (row: CredentialRow): Credential => ({
  id: row.id,
  name: row.name,
  type: row.type,
  ownerId: row.owner_id,
  settings: JSON.parse(row.settings) as Record<string, string>,
  allowedHosts: JSON.parse(row.allowed_hosts) as string[],
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
        `INSERT INTO credentials (id, name, type, owner_id, settings, allowed_hosts, sealed, created_at, updated_at)
         VALUES (@id, @name, @type, @owner_id, @settings, @allowed_hosts, @sealed, @created_at, @updated_at)`,
      ),
      get: db.prepare('SELECT * FROM credentials WHERE id = ?'),
      update: db.prepare(
        `UPDATE credentials SET name = @name, settings = @settings, allowed_hosts = @allowed_hosts, sealed = @sealed, updated_at = @updated_at
         WHERE id = @id`,
      ),
      delete: db.prepare('DELETE FROM credentials WHERE id = ?'),
      deleteUses: db.prepare('DELETE FROM credential_uses WHERE credential_id = ?'),
      insertUse: db.prepare(
        `INSERT INTO credential_uses (credential_id, user_id, at, host, kind, run_id, allowed)
         VALUES (@credential_id, @user_id, @at, @host, @kind, @run_id, @allowed)`,
      ),
      uses: db.prepare('SELECT * FROM credential_uses WHERE credential_id = ? ORDER BY at DESC, rowid DESC LIMIT ? OFFSET ?'),
      countUses: db.prepare('SELECT COUNT(*) AS total FROM credential_uses WHERE credential_id = ?'),
    };
    this.createTx = db.transaction((c: Credential) => {
      this.statements.insert.run({
        id: c.id,
        name: c.name,
        type: c.type,
        owner_id: c.ownerId,
        settings: JSON.stringify(c.settings),
        allowed_hosts: JSON.stringify(c.allowedHosts),
        sealed: c.sealed,
        created_at: toSqlDate(c.createdAt),
        updated_at: toSqlDate(c.updatedAt),
      });
      this.members.insertOwner(c.id, c.ownerId, c.createdAt);
    });
    this.deleteTx = db.transaction((id: string) => {
      this.members.deleteMembers(id);
      this.statements.deleteUses.run(id);
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

  async update(id: string, changes: Pick<Credential, 'name' | 'settings' | 'allowedHosts' | 'sealed' | 'updatedAt'>): Promise<boolean> {
    const params = {
      id,
      name: changes.name,
      settings: JSON.stringify(changes.settings),
      allowed_hosts: JSON.stringify(changes.allowedHosts),
      sealed: changes.sealed,
      updated_at: toSqlDate(changes.updatedAt),
    };
    return this.statements.update.run(params).changes > 0;
  }

  async delete(id: string): Promise<boolean> {
    return this.deleteTx(id);
  }

  async recordUse(use: CredentialUse): Promise<void> {
    this.statements.insertUse.run({
      credential_id: use.credentialId,
      user_id: use.userId,
      at: toSqlDate(use.at),
      host: use.host,
      kind: use.kind,
      run_id: use.runId,
      allowed: use.allowed ? 1 : 0,
    });
  }

  async listUses(credentialId: string, page: PageRequest): Promise<Page<CredentialUse>> {
    const rows = this.statements.uses.all(credentialId, page.limit, page.offset) as UseRow[];
    const { total } = this.statements.countUses.get(credentialId) as { total: number };
    return { items: rows.map(toUse), total };
  }
}
