import { Page, PageRequest } from '../../common/page';
import { Membership, ResourceType, Role } from '../../domain/membership.model';
import { MembershipStore } from '../../domain/membership-store.port';
import { SqliteDb, toSqlDate } from './sqlite-database';

interface MembershipRow {
  resource_type: ResourceType;
  resource_id: string;
  user_id: string;
  role: Role;
  created_at: string;
}

export class SqliteMembershipStore extends MembershipStore {
  private readonly statements;

  constructor(db: SqliteDb) {
    super();
    this.statements = {
      getRole: db.prepare('SELECT role FROM memberships WHERE resource_type = ? AND resource_id = ? AND user_id = ?').pluck(),
      upsert: db.prepare(
        `INSERT INTO memberships (resource_type, resource_id, user_id, role, created_at)
         VALUES (@resource_type, @resource_id, @user_id, @role, @created_at)
         ON CONFLICT (resource_type, resource_id, user_id) DO UPDATE SET role = excluded.role`,
      ),
      remove: db.prepare('DELETE FROM memberships WHERE resource_type = ? AND resource_id = ? AND user_id = ?'),
      list: db.prepare('SELECT * FROM memberships WHERE resource_type = ? AND resource_id = ? ORDER BY created_at, user_id'),
      forUser: db.prepare('SELECT resource_id, role FROM memberships WHERE resource_type = ? AND user_id = ?'),
    };
  }

  async getRole(resourceType: ResourceType, resourceId: string, userId: string): Promise<Role | null> {
    return (this.statements.getRole.get(resourceType, resourceId, userId) as Role | undefined) ?? null;
  }

  async setRole(m: Membership): Promise<void> {
    this.statements.upsert.run({
      resource_type: m.resourceType,
      resource_id: m.resourceId,
      user_id: m.userId,
      role: m.role,
      created_at: toSqlDate(m.createdAt),
    });
  }

  async remove(resourceType: ResourceType, resourceId: string, userId: string): Promise<boolean> {
    return this.statements.remove.run(resourceType, resourceId, userId).changes > 0;
  }

  async list(resourceType: ResourceType, resourceId: string): Promise<Membership[]> {
    return (this.statements.list.all(resourceType, resourceId) as MembershipRow[]).map((row) => ({
      resourceType: row.resource_type,
      resourceId: row.resource_id,
      userId: row.user_id,
      role: row.role,
      createdAt: new Date(row.created_at),
    }));
  }

  async listForUser(resourceType: ResourceType, userId: string): Promise<Map<string, Role>> {
    const rows = this.statements.forUser.all(resourceType, userId) as Pick<MembershipRow, 'resource_id' | 'role'>[];
    return new Map(rows.map((row) => [row.resource_id, row.role]));
  }
}

/**
 * What a table of shared resources (collections, workflows) does through the memberships table:
 * record the creator as owner, page through what a user may see with their role, and forget the
 * members of a deleted resource. Run inside the resource store's own transactions.
 */
export class SqliteMembershipScope<Row> {
  private readonly statements;

  constructor(db: SqliteDb, resourceType: ResourceType, table: string) {
    const visible = `FROM ${table} r JOIN memberships m ON m.resource_type = '${resourceType}' AND m.resource_id = r.id AND m.user_id = ?`;
    this.statements = {
      insertOwner: db.prepare(
        `INSERT INTO memberships (resource_type, resource_id, user_id, role, created_at) VALUES ('${resourceType}', ?, ?, 'owner', ?)`,
      ),
      listVisible: db.prepare(`SELECT r.*, m.role ${visible} ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?`),
      countVisible: db.prepare(`SELECT COUNT(*) ${visible}`).pluck(),
      deleteMembers: db.prepare(`DELETE FROM memberships WHERE resource_type = '${resourceType}' AND resource_id = ?`),
    };
  }

  insertOwner(resourceId: string, userId: string, createdAt: Date): void {
    this.statements.insertOwner.run(resourceId, userId, toSqlDate(createdAt));
  }

  visible<T>(userId: string, page: PageRequest, toRecord: (row: Row) => T): Page<T & { role: Role }> {
    const rows = this.statements.listVisible.all(userId, page.limit, page.offset) as (Row & { role: Role })[];
    return { items: rows.map((row) => ({ ...toRecord(row), role: row.role })), total: this.statements.countVisible.get(userId) as number };
  }

  deleteMembers(resourceId: string): void {
    this.statements.deleteMembers.run(resourceId);
  }
}
