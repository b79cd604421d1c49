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
];
