import type { Migration } from './migration';

export const CREDENTIAL_MIGRATIONS: Migration[] = [
  {
    version: 400,
    name: 'credentials',
    sql: `
      CREATE TABLE credentials (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        owner_id TEXT NOT NULL,
        settings TEXT NOT NULL,
        sealed TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 410,
    name: 'credential-hosts-and-uses',
    // Existing credentials allow no host yet: their owner's next use adopts its host.
    sql: `
      ALTER TABLE credentials ADD COLUMN allowed_hosts TEXT NOT NULL DEFAULT '[]';
      CREATE TABLE credential_uses (
        credential_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        at TEXT NOT NULL,
        host TEXT NOT NULL,
        kind TEXT NOT NULL,
        run_id TEXT,
        allowed INTEGER NOT NULL
      );
      CREATE INDEX credential_uses_by_credential ON credential_uses(credential_id, at DESC);
    `,
  },
];
