import type { Migration } from './migration';

export const JOBS_MIGRATIONS: Migration[] = [
  {
    version: 300,
    name: 'jobs',
    // Completed jobs are deleted, so the table holds pending and failed work only. The partial
    // indexes serve the two ways a job becomes claimable: its run_at came, or its lease expired.
    sql: `
      CREATE TABLE jobs (
        name TEXT NOT NULL,
        id TEXT NOT NULL,
        data TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('waiting', 'active', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        max_attempts INTEGER NOT NULL,
        backoff_ms INTEGER NOT NULL,
        run_at TEXT NOT NULL,
        lease_until TEXT,
        lease_token TEXT,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (name, id)
      );
      CREATE INDEX jobs_waiting ON jobs(name, run_at) WHERE state = 'waiting';
      CREATE INDEX jobs_leased ON jobs(name, lease_until) WHERE state = 'active';
      CREATE INDEX jobs_failed ON jobs(updated_at) WHERE state = 'failed';
    `,
  },
  {
    version: 301,
    name: 'service identity',
    // Written at first boot: the store's own id, and the queue its runs are queued on, which a
    // worker compares with its own before it takes any job.
    sql: `CREATE TABLE service_identity (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  },
];
