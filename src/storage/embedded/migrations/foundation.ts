import type { Migration } from './migration';

export const FOUNDATION_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'users-keys-collections-memberships',
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT,
        is_admin INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_user ON api_keys(user_id);
      CREATE TABLE collections (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        owner_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        embedding_model TEXT,
        embedding_dimension INTEGER
      );
      CREATE TABLE memberships (
        resource_type TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
        created_at TEXT NOT NULL,
        PRIMARY KEY (resource_type, resource_id, user_id)
      );
      CREATE INDEX memberships_user ON memberships(user_id, resource_type);
    `,
  },
];
