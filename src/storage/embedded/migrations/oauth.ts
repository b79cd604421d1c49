import type { Migration } from './migration';

/** The OAuth authorization server's clients, grants, codes and tokens (by the hash of their ids). */
export const OAUTH_MIGRATIONS: Migration[] = [
  {
    version: 530,
    name: 'oauth records',
    sql: `
      CREATE TABLE oauth_records (
        kind TEXT NOT NULL,
        id_hash TEXT NOT NULL,
        payload TEXT NOT NULL,
        grant_hash TEXT,
        uid_hash TEXT,
        user_code_hash TEXT,
        expires_at TEXT,
        consumed_at TEXT,
        PRIMARY KEY (kind, id_hash)
      );
      CREATE INDEX oauth_records_grant ON oauth_records(grant_hash) WHERE grant_hash IS NOT NULL;
      CREATE INDEX oauth_records_uid ON oauth_records(kind, uid_hash) WHERE uid_hash IS NOT NULL;
      CREATE INDEX oauth_records_user_code ON oauth_records(kind, user_code_hash) WHERE user_code_hash IS NOT NULL;
      CREATE INDEX oauth_records_expires ON oauth_records(expires_at) WHERE expires_at IS NOT NULL;
    `,
  },
];
