import { OAuthRecord, OAuthStore } from '../../domain/oauth-store.port';
import { fromSqlDate, SqliteDb, toSqlDate } from './sqlite-database';

interface OAuthRow {
  kind: string;
  id_hash: string;
  payload: string;
  grant_hash: string | null;
  uid_hash: string | null;
  user_code_hash: string | null;
  expires_at: string | null;
  consumed_at: string | null;
}

const toRecord = (row: OAuthRow): OAuthRecord => ({
  kind: row.kind,
  idHash: row.id_hash,
  payload: row.payload,
  grantHash: row.grant_hash,
  uidHash: row.uid_hash,
  userCodeHash: row.user_code_hash,
  expiresAt: fromSqlDate(row.expires_at),
  consumedAt: fromSqlDate(row.consumed_at),
});

const LIVE = '(expires_at IS NULL OR expires_at > @now)';

export class SqliteOAuthStore extends OAuthStore {
  private readonly statements;

  constructor(db: SqliteDb) {
    super();
    this.statements = {
      upsert: db.prepare(
        `INSERT INTO oauth_records (kind, id_hash, payload, grant_hash, uid_hash, user_code_hash, expires_at, consumed_at)
         VALUES (@kind, @id_hash, @payload, @grant_hash, @uid_hash, @user_code_hash, @expires_at, @consumed_at)
         ON CONFLICT (kind, id_hash) DO UPDATE SET payload = excluded.payload, grant_hash = excluded.grant_hash,
           uid_hash = excluded.uid_hash, user_code_hash = excluded.user_code_hash, expires_at = excluded.expires_at,
           consumed_at = excluded.consumed_at`,
      ),
      // Expired records go as others are written: nothing reads them.
      expire: db.prepare('DELETE FROM oauth_records WHERE expires_at <= ?'),
      find: db.prepare<{ kind: string; id_hash: string; now: string }, OAuthRow>(
        `SELECT * FROM oauth_records WHERE kind = @kind AND id_hash = @id_hash AND ${LIVE}`,
      ),
      byUid: db.prepare<{ kind: string; hash: string; now: string }, OAuthRow>(
        `SELECT * FROM oauth_records WHERE kind = @kind AND uid_hash = @hash AND ${LIVE} LIMIT 1`,
      ),
      byUserCode: db.prepare<{ kind: string; hash: string; now: string }, OAuthRow>(
        `SELECT * FROM oauth_records WHERE kind = @kind AND user_code_hash = @hash AND ${LIVE} LIMIT 1`,
      ),
      consume: db.prepare('UPDATE oauth_records SET consumed_at = ? WHERE kind = ? AND id_hash = ?'),
      destroy: db.prepare('DELETE FROM oauth_records WHERE kind = ? AND id_hash = ?'),
      revokeByGrant: db.prepare('DELETE FROM oauth_records WHERE grant_hash = ?'),
    };
  }

  async upsert(r: OAuthRecord): Promise<void> {
    this.statements.upsert.run({
      kind: r.kind,
      id_hash: r.idHash,
      payload: r.payload,
      grant_hash: r.grantHash,
      uid_hash: r.uidHash,
      user_code_hash: r.userCodeHash,
      expires_at: toSqlDate(r.expiresAt),
      consumed_at: toSqlDate(r.consumedAt),
    });
    this.statements.expire.run(new Date().toISOString());
  }

  async find(kind: string, idHash: string, now: Date): Promise<OAuthRecord | null> {
    const row = this.statements.find.get({ kind, id_hash: idHash, now: now.toISOString() });
    return row ? toRecord(row) : null;
  }

  async findBy(kind: string, field: 'uidHash' | 'userCodeHash', hash: string, now: Date): Promise<OAuthRecord | null> {
    const statement = field === 'uidHash' ? this.statements.byUid : this.statements.byUserCode;
    const row = statement.get({ kind, hash, now: now.toISOString() });
    return row ? toRecord(row) : null;
  }

  async consume(kind: string, idHash: string, at: Date): Promise<boolean> {
    return this.statements.consume.run(at.toISOString(), kind, idHash).changes > 0;
  }

  async destroy(kind: string, idHash: string): Promise<void> {
    this.statements.destroy.run(kind, idHash);
  }

  async revokeByGrant(grantHash: string): Promise<number> {
    return this.statements.revokeByGrant.run(grantHash).changes;
  }
}
