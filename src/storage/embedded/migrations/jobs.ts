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
  {
    version: 310,
    name: 'jobs-fair-shares',
    // Fair order (src/jobs/fair-turns.ts): whose share a job takes, its turn and lane. Jobs stored
    // before have turn 0, as delayed ones: taken first, by due time. The partial indexes serve the
    // claim (by turn; delayed jobs by due time; the lane) and the turn of a new job (the head, and
    // its user's flows and pending jobs).
    sql: `
      ALTER TABLE jobs ADD COLUMN share_user TEXT NOT NULL DEFAULT '';
      ALTER TABLE jobs ADD COLUMN share_flow TEXT NOT NULL DEFAULT '';
      ALTER TABLE jobs ADD COLUMN turn INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN lane INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX jobs_in_turn ON jobs(name, turn) WHERE state = 'waiting' AND turn > 0;
      CREATE INDEX jobs_delayed ON jobs(name, run_at) WHERE state = 'waiting' AND turn = 0;
      CREATE INDEX jobs_lane ON jobs(name, turn, run_at) WHERE state = 'waiting' AND lane = 1;
      CREATE INDEX jobs_flows ON jobs(name, share_user, share_flow, turn) WHERE state = 'waiting' AND turn > 0;
      CREATE INDEX jobs_users ON jobs(name, share_user) WHERE state IN ('waiting', 'active');
    `,
  },
  {
    version: 320,
    name: 'jobs-without-waiting-index',
    // Every waiting job is in jobs_in_turn or jobs_delayed since 310, and only the next-due lookup
    // still read jobs_waiting: each job's insert and claim wrote one index more than they need.
    sql: `DROP INDEX IF EXISTS jobs_waiting;`,
  },
  {
    version: 330,
    name: 'jobs-users-off-turn',
    // jobs_users held a user's waiting and running jobs, so a claim (waiting to active) deleted and
    // inserted its entry again. A user's jobs in turn are in jobs_flows already: this one holds the
    // rest of what makes a user pending (running, or waiting for their time), so a job in turn enters
    // it at its claim and an insert writes one index entry fewer (10 entries a job's life against 12).
    sql: `
      DROP INDEX IF EXISTS jobs_users;
      CREATE INDEX jobs_users_off_turn ON jobs(name, share_user) WHERE state = 'active' OR (state = 'waiting' AND turn = 0);
    `,
  },
];
