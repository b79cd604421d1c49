import type { Migration } from './migration';

export const CONTENT_MIGRATIONS: Migration[] = [
  {
    version: 100,
    name: 'files-passages',
    sql: `
      CREATE TABLE files (
        id TEXT PRIMARY KEY,
        collection_id TEXT NOT NULL,
        name TEXT NOT NULL,
        mime TEXT NOT NULL,
        size INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'indexed', 'error')),
        error TEXT,
        source_url TEXT,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        character_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX files_collection ON files(collection_id, created_at, id);
      CREATE INDEX files_status ON files(status, id);
      CREATE TABLE passages (
        id TEXT PRIMARY KEY,
        file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        collection_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        content TEXT NOT NULL,
        page INTEGER
      );
      CREATE UNIQUE INDEX passages_file ON passages(file_id, idx);
    `,
  },
  {
    version: 101,
    name: 'files-lane-progress',
    // Ingestion lane (standard or large) and progress ({stage, done, total} as JSON).
    sql: `
      ALTER TABLE files ADD COLUMN lane TEXT NOT NULL DEFAULT 'standard' CHECK (lane IN ('standard', 'large'));
      ALTER TABLE files ADD COLUMN progress TEXT;
    `,
  },
  {
    version: 102,
    name: 'files-metadata',
    // User metadata (a flat JSON object, '{}' when none) and what extraction read from the document.
    sql: `
      ALTER TABLE files ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE files ADD COLUMN pages INTEGER;
      ALTER TABLE files ADD COLUMN title TEXT;
      ALTER TABLE files ADD COLUMN author TEXT;
    `,
  },
];
