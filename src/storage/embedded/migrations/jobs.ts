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
    name: 'jobs-out-of-turn',
    // jobs_users held a user's waiting and running jobs, so a claim (waiting to active) deleted and
    // inserted its entry again, and jobs_leased took one more. A user's jobs in turn are in
    // jobs_flows already; jobs_out_of_turn holds the others a query reads: the running ones by the
    // end of their lease (the claim of an expired one, the next-due time) and then by user, and the
    // waiting ones without a turn by user (waiting rows have no lease), for whether a user has
    // anything pending. A job in turn enters it at its claim: a job's life writes 8 index entries
    // where it wrote 12, in 5 of the table's B-trees where it wrote 6. (Failed jobs without a turn
    // are in it too, which no query reads: the index's WHERE leaves `state` out of its second term
    // so a query for waiting jobs without a turn (turn = 0) can use it.)
    sql: `
      DROP INDEX IF EXISTS jobs_users;
      DROP INDEX IF EXISTS jobs_leased;
      CREATE INDEX jobs_out_of_turn ON jobs(name, state, lease_until, share_user) WHERE state = 'active' OR turn = 0;
    `,
  },
];
