import type { Migration } from './migration';

export const WORKFLOW_MIGRATIONS: Migration[] = [
  {
    version: 200,
    name: 'workflows-versions-runs-steps',
    sql: `
      CREATE TABLE workflows (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        owner_id TEXT NOT NULL,
        draft TEXT NOT NULL,
        active_version_id TEXT,
        active_version INTEGER,
        latest_version INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX workflows_created ON workflows(created_at);
      CREATE TABLE workflow_versions (
        id TEXT PRIMARY KEY,
        workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        definition TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (workflow_id, version)
      );
      CREATE TABLE workflow_runs (
        id TEXT PRIMARY KEY,
        workflow_id TEXT NOT NULL,
        run_type TEXT NOT NULL CHECK (run_type IN ('test', 'production')),
        version_id TEXT,
        version INTEGER,
        definition TEXT,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
        input TEXT,
        started_by TEXT NOT NULL,
        acting_user_id TEXT NOT NULL,
        idempotency_key TEXT,
        job_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        lease_owner TEXT,
        lease_expires_at TEXT,
        claims INTEGER NOT NULL DEFAULT 0,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        error TEXT
      );
      CREATE INDEX workflow_runs_workflow ON workflow_runs(workflow_id, created_at);
      CREATE INDEX workflow_runs_status ON workflow_runs(status, created_at);
      CREATE UNIQUE INDEX workflow_runs_idempotency ON workflow_runs(workflow_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE TABLE workflow_run_steps (
        run_id TEXT NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        type TEXT NOT NULL,
        node_version INTEGER NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        output TEXT,
        error TEXT,
        PRIMARY KEY (run_id, node_id)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 201,
    name: 'runs-control-flow',
    // SQLite cannot change a CHECK constraint in place: the runs table is rebuilt with the `waiting`
    // status and the new columns. Steps move first, so dropping the old runs table cascades nothing.
    sql: `
      CREATE TABLE workflow_runs_v2 (
        id TEXT PRIMARY KEY,
        workflow_id TEXT NOT NULL,
        run_type TEXT NOT NULL CHECK (run_type IN ('test', 'production')),
        version_id TEXT,
        version INTEGER,
        definition TEXT,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled')),
        input TEXT,
        started_by TEXT NOT NULL,
        acting_user_id TEXT NOT NULL,
        idempotency_key TEXT,
        job_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        lease_owner TEXT,
        lease_expires_at TEXT,
        claims INTEGER NOT NULL DEFAULT 0,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        resume_at TEXT,
        output TEXT,
        parent_run_id TEXT,
        parent_node_id TEXT,
        depth INTEGER NOT NULL DEFAULT 0,
        retry_of TEXT
      );
      INSERT INTO workflow_runs_v2 (id, workflow_id, run_type, version_id, version, definition, status, input, started_by,
        acting_user_id, idempotency_key, job_id, created_at, started_at, finished_at, lease_owner, lease_expires_at, claims,
        cancel_requested, error)
      SELECT id, workflow_id, run_type, version_id, version, definition, status, input, started_by, acting_user_id,
        idempotency_key, job_id, created_at, started_at, finished_at, lease_owner, lease_expires_at, claims, cancel_requested, error
      FROM workflow_runs;
      CREATE TABLE workflow_run_steps_v2 (
        run_id TEXT NOT NULL REFERENCES workflow_runs_v2(id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        type TEXT NOT NULL,
        node_version INTEGER NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        output TEXT,
        error TEXT,
        iterations INTEGER,
        reused INTEGER NOT NULL DEFAULT 0,
        state TEXT,
        PRIMARY KEY (run_id, node_id)
      ) WITHOUT ROWID;
      INSERT INTO workflow_run_steps_v2 (run_id, node_id, position, type, node_version, status, attempts, started_at, finished_at, output, error)
      SELECT run_id, node_id, position, type, node_version, status, attempts, started_at, finished_at, output, error FROM workflow_run_steps;
      DROP TABLE workflow_run_steps;
      DROP TABLE workflow_runs;
      ALTER TABLE workflow_runs_v2 RENAME TO workflow_runs;
      ALTER TABLE workflow_run_steps_v2 RENAME TO workflow_run_steps;
      CREATE INDEX workflow_runs_workflow ON workflow_runs(workflow_id, created_at);
      CREATE INDEX workflow_runs_status ON workflow_runs(status, created_at);
      -- Partial: a run enters these only while running or waiting, so queuing and finishing a run
      -- (the common path) write no entry to them.
      CREATE INDEX workflow_runs_running ON workflow_runs(workflow_id, lease_expires_at) WHERE status = 'running';
      CREATE INDEX workflow_runs_waiting ON workflow_runs(resume_at) WHERE status = 'waiting';
      CREATE INDEX workflow_runs_parent ON workflow_runs(parent_run_id) WHERE parent_run_id IS NOT NULL;
      CREATE UNIQUE INDEX workflow_runs_idempotency ON workflow_runs(workflow_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      ALTER TABLE workflows ADD COLUMN settings TEXT;
      ALTER TABLE workflows ADD COLUMN schedule TEXT;
      CREATE INDEX workflows_scheduled ON workflows(id) WHERE schedule IS NOT NULL;
    `,
  },
  {
    version: 202,
    name: 'workflow-tools',
    sql: `
      ALTER TABLE workflows ADD COLUMN tool TEXT;
      CREATE INDEX workflows_tools ON workflows(id) WHERE tool IS NOT NULL;
    `,
  },
  {
    version: 203,
    name: 'step-inputs',
    sql: `ALTER TABLE workflow_run_steps ADD COLUMN input TEXT;`,
  },
  {
    version: 204,
    name: 'sealed-run-inputs',
    sql: `ALTER TABLE workflow_runs ADD COLUMN sealed_input TEXT;`,
  },
  {
    version: 205,
    name: 'parked-runs',
    // Partial, like the other run indexes: only runs waiting for a place under a limit are in it.
    sql: `
      ALTER TABLE workflow_runs ADD COLUMN parked INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX workflow_runs_parked ON workflow_runs(workflow_id, created_at, id) WHERE parked = 1;
    `,
  },
  {
    version: 206,
    name: 'run-lease-losses',
    sql: `ALTER TABLE workflow_runs ADD COLUMN lease_losses INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 207,
    name: 'run-triggers-and-activators',
    // Who put the active version in force (a scheduled run acts as them) starts as its publisher;
    // how older runs started is read back from what they recorded. `trigger` is an SQL keyword.
    sql: `
      ALTER TABLE workflows ADD COLUMN activated_by TEXT;
      UPDATE workflows SET activated_by = (SELECT created_by FROM workflow_versions v WHERE v.id = workflows.active_version_id)
        WHERE active_version_id IS NOT NULL;
      ALTER TABLE workflow_runs ADD COLUMN run_trigger TEXT NOT NULL DEFAULT 'webhook';
      UPDATE workflow_runs SET run_trigger = 'sub-workflow' WHERE parent_run_id IS NOT NULL;
      UPDATE workflow_runs SET run_trigger = 'retry' WHERE retry_of IS NOT NULL;
      UPDATE workflow_runs SET run_trigger = 'schedule' WHERE idempotency_key LIKE 'schedule:%';
    `,
  },
  {
    version: 210,
    name: 'queued-runs-per-workflow',
    // Admission control counts a workflow's queued runs on every webhook call: an index of the queued
    // ones alone, so the count reads at most the limit's worth of entries whatever the history.
    sql: `CREATE INDEX workflow_runs_queued ON workflow_runs(workflow_id, created_at) WHERE status = 'queued';`,
  },
  {
    version: 240,
    name: 'node-tests',
    sql: `ALTER TABLE workflow_runs ADD COLUMN node_test TEXT;`,
  },
  {
    version: 250,
    name: 'draft-saved-by',
    // Who vouched for the draft: a sub-workflow test run of it acts as them. Unknown for drafts saved
    // before (NULL): such a test run is refused until someone saves the draft again.
    sql: `ALTER TABLE workflows ADD COLUMN draft_saved_by TEXT;`,
  },
  {
    version: 260,
    name: 'queued-runs-per-user',
    // Admission control also counts the queued runs acting as the caller's user (their share of the
    // service's limit) on every webhook call.
    sql: `CREATE INDEX workflow_runs_queued_by_user ON workflow_runs(acting_user_id, created_at) WHERE status = 'queued';`,
  },
  {
    version: 270,
    name: 'runs-by-workflow-and-status',
    // A workflow's runs in one status (GET /runs?workflowId=&status=, its page and its total) read
    // those runs alone: SQLite took the status index for them, reading every run of that status in
    // the store, so each such count cost more as the process ran more runs of any workflow.
    sql: `CREATE INDEX workflow_runs_workflow_status ON workflow_runs(workflow_id, status, created_at);`,
  },
  {
    version: 280,
    name: 'fewer-run-index-writes',
    // A run's three statuses (queued, running, finished) each moved its entry in every index of all
    // runs by status: the status index, besides the one per workflow, was five B-tree writes a run.
    // It gives way to partial indexes that a run enters once: the queue in its order (the
    // reconciler's pages, the service-wide count and its oldest) and the finished runs (the pruner,
    // listings by a finished status); running and waiting runs have theirs (migration 201). The
    // per-workflow index of queued runs (210) is dropped: since migration 270 the admission count
    // reads (workflow_id, status, created_at), which covers it.
    // The finished WHERE is an OR, not an IN: a listing's `status = ?` bound to 'failed' implies it.
    sql: `
      DROP INDEX workflow_runs_status;
      DROP INDEX workflow_runs_queued;
      CREATE INDEX workflow_runs_queue ON workflow_runs(created_at, id) WHERE status = 'queued';
      CREATE INDEX workflow_runs_finished ON workflow_runs(status, created_at)
        WHERE status = 'succeeded' OR status = 'failed' OR status = 'canceled';
    `,
  },
  {
    version: 290,
    name: 'deleted-workflows',
    // The ids of deleted workflows: a run's job still queued when its workflow was deleted (with its
    // runs) ends quietly as done, where a job naming a run the store never had is tried again.
    sql: `CREATE TABLE deleted_workflows (id TEXT PRIMARY KEY, deleted_at TEXT NOT NULL);`,
  },
];
