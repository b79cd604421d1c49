// The SQL of the SQLite run store (sqlite-run-store.adapter.ts): its rows, how they map to runs and
// steps, and its statements, prepared once per connection.
import type { WorkflowDefinition } from '../../domain/workflow-definition.model';
import { RunCursor } from '../../domain/run-store.port';
import { Run, RunStatus, RunTrigger, RunType } from '../../domain/run.model';
import { RunError, StepRecord, StepStatus } from '../../domain/step.model';
import { fromSqlDate, SqliteDb, toSqlDate } from './sqlite-database';

export interface RunRow {
  id: string;
  workflow_id: string;
  run_type: RunType;
  version_id: string | null;
  version: number | null;
  definition?: string | null;
  status: RunStatus;
  input: string | null;
  sealed_input?: string | null;
  started_by: string;
  run_trigger: RunTrigger;
  acting_user_id: string;
  idempotency_key: string | null;
  job_id: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  lease_owner: string | null;
  lease_expires_at: string | null;
  claims: number;
  lease_losses: number;
  cancel_requested: number;
  error: string | null;
  resume_at: string | null;
  output?: string | null;
  parent_run_id: string | null;
  parent_node_id: string | null;
  depth: number;
  retry_of: string | null;
  node_test: string | null;
}

export interface StepRow {
  node_id: string;
  position: number;
  type: string;
  node_version: number;
  status: StepStatus;
  attempts: number;
  started_at: string | null;
  finished_at: string | null;
  input: string | null;
  output: string | null;
  error: string | null;
  iterations: number | null;
  reused: number;
  state: string | null;
  sub_steps: string | null;
}

/** A column's JSON (a step's recorded input and output go through stepJson, with the text the executor made). */
export const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
const parsed = <T>(text: string | null | undefined): T | undefined => (text == null ? undefined : (JSON.parse(text) as T));

export const toRun = (row: RunRow, steps: StepRecord[] = []): Run => ({
  id: row.id,
  workflowId: row.workflow_id,
  runType: row.run_type,
  versionId: row.version_id,
  version: row.version,
  definition: parsed<WorkflowDefinition>(row.definition) ?? null,
  status: row.status,
  input: parsed(row.input),
  sealedInput: row.sealed_input ?? null,
  startedBy: row.started_by,
  trigger: row.run_trigger,
  actingUserId: row.acting_user_id,
  idempotencyKey: row.idempotency_key,
  jobId: row.job_id,
  createdAt: new Date(row.created_at),
  startedAt: fromSqlDate(row.started_at),
  finishedAt: fromSqlDate(row.finished_at),
  leaseOwner: row.lease_owner,
  leaseExpiresAt: fromSqlDate(row.lease_expires_at),
  claims: row.claims,
  leaseLosses: row.lease_losses,
  cancelRequested: row.cancel_requested === 1,
  error: parsed<RunError>(row.error) ?? null,
  resumeAt: fromSqlDate(row.resume_at),
  ...(row.output != null ? { output: JSON.parse(row.output) } : {}),
  parentRunId: row.parent_run_id,
  parentNodeId: row.parent_node_id,
  depth: row.depth,
  retryOf: row.retry_of,
  nodeTest: parsed<Run['nodeTest']>(row.node_test) ?? null,
  steps,
});

export const toStep = (row: StepRow): StepRecord => ({
  nodeId: row.node_id,
  position: row.position,
  type: row.type,
  version: row.node_version,
  status: row.status,
  attempts: row.attempts,
  startedAt: fromSqlDate(row.started_at),
  finishedAt: fromSqlDate(row.finished_at),
  ...(row.input !== null ? { input: JSON.parse(row.input) } : {}),
  ...(row.output !== null ? { output: JSON.parse(row.output) } : {}),
  error: parsed(row.error) ?? null,
  ...(row.iterations !== null ? { iterations: row.iterations } : {}),
  ...(row.reused === 1 ? { reused: true } : {}),
  ...(row.state !== null ? { state: row.state } : {}),
  ...(row.sub_steps != null ? { subSteps: JSON.parse(row.sub_steps) } : {}),
});

/** What a claim sets: the run is running under @owner's lease until @until. */
const CLAIM = `status = 'running', lease_owner = @owner, lease_expires_at = @until, resume_at = NULL, parked = 0,
  claims = claims + 1, started_at = COALESCE(started_at, @now)`;

/** A run a claim may take: queued, waiting and due, or running under an expired lease or (`mine`) under @owner's own. */
const claimable = (mine: boolean) =>
  `(status = 'queued' OR (status = 'waiting' AND resume_at <= @now)
     OR (status = 'running' AND (lease_expires_at < @now${mine ? ' OR lease_owner = @owner' : ''})))`;

/**
 * Runs the pruner may delete: finished ones only. Spelt as the WHERE of the partial index of finished runs (migration 280),
 * term for term: SQLite uses a partial index only for a query whose WHERE implies the index's, and it does not see that
 * `status IN (...)` implies an OR of the same values.
 */
const FINISHED = `(status = 'succeeded' OR status = 'failed' OR status = 'canceled')`;

/** A step's columns, its values after run_id (by position), and its replacement of the same node's row. */
const STEP_COLUMNS = `run_id, node_id, position, type, node_version, status, attempts, started_at, finished_at, input, output, error,
  iterations, reused, state, sub_steps`;
const STEP_VALUES = '?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?';
const STEP_UPSERT = `ON CONFLICT (run_id, node_id) DO UPDATE SET position = excluded.position, type = excluded.type,
  node_version = excluded.node_version, status = excluded.status, attempts = excluded.attempts, started_at = excluded.started_at,
  finished_at = excluded.finished_at, input = excluded.input, output = excluded.output, error = excluded.error,
  iterations = excluded.iterations, reused = excluded.reused, state = excluded.state, sub_steps = excluded.sub_steps`;

/** The keyset of a page: from the start when there is no cursor (every id sorts after ''). */
export const pageAfter = (after?: RunCursor) => ({ at: toSqlDate(after?.at ?? new Date(0)), id: after?.id ?? '' });

/** Every column but the test-run definition and the sealed input, which only the worker reads (through get), and the output. */
const SUMMARY_COLUMNS = `id, workflow_id, run_type, version_id, version, status, input, started_by, run_trigger, acting_user_id,
  idempotency_key, job_id, created_at, started_at, finished_at, lease_owner, lease_expires_at, claims, lease_losses, cancel_requested, error,
  resume_at, parent_run_id, parent_node_id, depth, retry_of, node_test`;
export const LISTED_COLUMNS = SUMMARY_COLUMNS.split(',')
  .map((column) => `r.${column.trim()}`)
  .join(', ');

/**
 * The statements of the run store, prepared once on its connection. The ones every run executes
 * (its insert, each step's upsert, its completion) take their values by position, in the order of
 * their columns: binding 16 or 20 named values from an object cost 1.5-2.5 us more a statement.
 */
export const prepareRunStatements = (db: SqliteDb) => ({
  // Positional: id, workflow_id, run_type, version_id, version, definition, status, input, sealed_input, started_by, run_trigger,
  // acting_user_id, idempotency_key, job_id, created_at, parent_run_id, parent_node_id, depth, retry_of, node_test.
  insert: db.prepare(
    `INSERT INTO workflow_runs (id, workflow_id, run_type, version_id, version, definition, status, input, sealed_input, started_by,
       run_trigger, acting_user_id, idempotency_key, job_id, created_at, started_at, finished_at, lease_owner, lease_expires_at,
       claims, cancel_requested, error, parent_run_id, parent_node_id, depth, retry_of, node_test)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
       ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, 0, 0, NULL,
       ?, ?, ?, ?, ?)`,
  ),
  byIdempotencyKey: db.prepare('SELECT * FROM workflow_runs WHERE workflow_id = ? AND idempotency_key = ?'),
  forgetIdempotencyKey: db.prepare('UPDATE workflow_runs SET idempotency_key = NULL WHERE id = ?'),
  get: db.prepare('SELECT * FROM workflow_runs WHERE id = ?'),
  status: db.prepare('SELECT status FROM workflow_runs WHERE id = ?').pluck(),
  steps: db.prepare(
    `SELECT node_id, position, type, node_version, status, attempts, started_at, finished_at, input, output, error, iterations, reused, state, sub_steps
     FROM workflow_run_steps WHERE run_id = ? ORDER BY position`,
  ),
  claim: db.prepare(`UPDATE workflow_runs SET ${CLAIM} WHERE id = @id AND ${claimable(true)} RETURNING *`),
  claimable: db.prepare(`SELECT workflow_id FROM workflow_runs WHERE id = @id AND ${claimable(true)}`),
  // The claim made inside its job's (RunStore.claimWithin): not of a run under the claimer's own live lease.
  claimNew: db.prepare(`UPDATE workflow_runs SET ${CLAIM} WHERE id = @id AND ${claimable(false)} RETURNING *`),
  claimableNew: db.prepare(`SELECT workflow_id FROM workflow_runs WHERE id = @id AND ${claimable(false)}`),
  runningOthers: db
    .prepare(
      `SELECT COUNT(*) FROM workflow_runs WHERE workflow_id = ? AND status = 'running' AND lease_expires_at >= ? AND id != ?
         AND parent_run_id IS NULL`,
    )
    .pluck(),
  lease: db.prepare('SELECT lease_owner, status, cancel_requested FROM workflow_runs WHERE id = ?'),
  renew: db
    .prepare(
      `UPDATE workflow_runs SET lease_expires_at = ? WHERE id = ? AND lease_owner = ? AND status = 'running'
       RETURNING cancel_requested`,
    )
    .pluck(),
  // Positional, in the order of the columns named.
  upsertStep: db.prepare(`INSERT INTO workflow_run_steps (${STEP_COLUMNS}) VALUES (?, ${STEP_VALUES}) ${STEP_UPSERT}`),
  // Positional: id, owner, then upsertStep's values after run_id. The lease check folded into a step's write (recordSteps):
  // the step is written (a change) only while the owner holds the run's lease and no cancel was asked for. A RETURNING of
  // cancel_requested instead cost 1.2 us more than the lease read it saved (an ephemeral table for the returned row).
  upsertStepLeased: db.prepare(
    `WITH lease AS (SELECT id FROM workflow_runs WHERE id = ? AND lease_owner = ? AND status = 'running' AND cancel_requested = 0)
     INSERT INTO workflow_run_steps (${STEP_COLUMNS}) SELECT id, ${STEP_VALUES} FROM lease WHERE true ${STEP_UPSERT}`,
  ),
  // Positional: status, error, output, finished_at, id, owner.
  complete: db.prepare(
    `UPDATE workflow_runs SET status = ?, error = ?, output = ?, finished_at = ?, lease_owner = NULL, lease_expires_at = NULL
     WHERE id = ? AND lease_owner = ? AND status = 'running'`,
  ),
  dropStates: db.prepare('UPDATE workflow_run_steps SET state = NULL WHERE run_id = ? AND state IS NOT NULL'),
  dropStepData: db.prepare('UPDATE workflow_run_steps SET input = NULL, output = NULL, state = NULL, sub_steps = NULL WHERE run_id = ?'),
  suspend: db.prepare(
    `UPDATE workflow_runs SET status = 'waiting', resume_at = @resume_at, job_id = @job_id, lease_owner = NULL, lease_expires_at = NULL
     WHERE id = @id AND lease_owner = @owner AND status = 'running' AND cancel_requested = 0`,
  ),
  release: db.prepare(
    `UPDATE workflow_runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL
     WHERE id = ? AND lease_owner = ? AND status = 'running'`,
  ),
  cancelQueued: db.prepare(
    `UPDATE workflow_runs SET status = 'canceled', cancel_requested = 1, finished_at = ?, error = ?, resume_at = NULL
     WHERE id = ? AND status IN ('queued', 'waiting')`,
  ),
  cancelRunning: db.prepare(`UPDATE workflow_runs SET cancel_requested = 1 WHERE id = ? AND status = 'running'`),
  waitingAt: db.prepare(`SELECT node_id FROM workflow_run_steps WHERE run_id = ? AND status = 'waiting' ORDER BY position LIMIT 1`).pluck(),
  cancelWaitingStep: db.prepare(
    `UPDATE workflow_run_steps SET status = 'canceled', finished_at = ? WHERE run_id = ? AND status = 'waiting'`,
  ),
  decideStep: db.prepare(
    `UPDATE workflow_run_steps SET state = @state, output = @output
     WHERE run_id = @id AND node_id = @node_id AND status = 'waiting' AND state = @expected
       AND EXISTS (SELECT 1 FROM workflow_runs WHERE id = @id AND status = 'waiting')`,
  ),
  dueNow: db.prepare(`UPDATE workflow_runs SET resume_at = @now, job_id = @job_id WHERE id = @id AND status = 'waiting'`),
  park: db.prepare(`UPDATE workflow_runs SET parked = 1, job_id = ? WHERE id = ? AND status IN ('queued', 'waiting')`),
  unparkOldest: db.prepare(
    `UPDATE workflow_runs SET parked = 0, job_id = id || @suffix
     WHERE id = (SELECT id FROM workflow_runs WHERE workflow_id = @workflow_id AND parked = 1 AND status IN ('queued', 'waiting')
       ORDER BY created_at, id LIMIT 1)
     RETURNING ${SUMMARY_COLUMNS}`,
  ),
  // Keyset pages: (time, id) after the cursor; a cursor at the epoch starts from the beginning.
  listQueued: db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM workflow_runs WHERE status = 'queued' AND created_at < @before AND (created_at, id) > (@at, @id)
     ORDER BY created_at, id LIMIT @limit`,
  ),
  // Bounded counts: the queue's partial index (migration 280), one workflow's runs by status (270), one user's queued runs (260).
  queuedCount: db.prepare(`SELECT COUNT(*) FROM (SELECT 1 FROM workflow_runs WHERE status = 'queued' LIMIT ?)`).pluck(),
  queuedOldest: db.prepare(`SELECT MIN(created_at) FROM workflow_runs WHERE status = 'queued'`).pluck(),
  queuedCountOf: db
    .prepare(`SELECT COUNT(*) FROM (SELECT 1 FROM workflow_runs WHERE status = 'queued' AND workflow_id = ? LIMIT ?)`)
    .pluck(),
  queuedOldestOf: db.prepare(`SELECT MIN(created_at) FROM workflow_runs WHERE status = 'queued' AND workflow_id = ?`).pluck(),
  // Migration 260: one acting user's queued runs, for their share of the service's limit.
  queuedCountBy: db
    .prepare(`SELECT COUNT(*) FROM (SELECT 1 FROM workflow_runs WHERE status = 'queued' AND acting_user_id = ? LIMIT ?)`)
    .pluck(),
  queuedOldestBy: db.prepare(`SELECT MIN(created_at) FROM workflow_runs WHERE status = 'queued' AND acting_user_id = ?`).pluck(),
  // The same index, grouped: the fullest user's share.
  queuedPerUserMax: db
    .prepare(`SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM workflow_runs WHERE status = 'queued' GROUP BY acting_user_id)`)
    .pluck(),
  discardSteps: db.prepare(
    `DELETE FROM workflow_run_steps WHERE run_id = ? AND EXISTS (SELECT 1 FROM workflow_runs WHERE id = ? AND status = 'queued' AND claims = 0)`,
  ),
  discard: db.prepare(`DELETE FROM workflow_runs WHERE id = ? AND status = 'queued' AND claims = 0`),
  listDueWaiting: db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM workflow_runs WHERE status = 'waiting' AND resume_at < @before AND (resume_at, id) > (@at, @id)
     ORDER BY resume_at, id LIMIT @limit`,
  ),
  listExpired: db.prepare(
    `SELECT ${SUMMARY_COLUMNS} FROM workflow_runs WHERE status = 'running' AND lease_expires_at < ? ORDER BY created_at LIMIT ?`,
  ),
  requeue: db.prepare(
    `UPDATE workflow_runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, job_id = @job_id,
       lease_losses = lease_losses + 1
     WHERE id = @id AND status = 'running' AND lease_owner IS @owner AND lease_expires_at < @now`,
  ),
  setJobId: db.prepare(`UPDATE workflow_runs SET job_id = ? WHERE id = ? AND status IN ('queued', 'waiting')`),
  abandon: db.prepare(
    `UPDATE workflow_runs SET status = 'failed', error = ?, finished_at = ?, lease_owner = NULL, lease_expires_at = NULL, resume_at = NULL
     WHERE id = ? AND status IN ('queued', 'running', 'waiting')`,
  ),
  deleteStepsOfWorkflow: db.prepare('DELETE FROM workflow_run_steps WHERE run_id IN (SELECT id FROM workflow_runs WHERE workflow_id = ?)'),
  deleteRunsOfWorkflow: db.prepare('DELETE FROM workflow_runs WHERE workflow_id = ?'),
  finishedBefore: db.prepare(`SELECT id FROM workflow_runs WHERE ${FINISHED} AND finished_at < ? LIMIT ?`).pluck(),
  crowded: db.prepare(`SELECT workflow_id FROM workflow_runs WHERE ${FINISHED} GROUP BY workflow_id HAVING COUNT(*) > ?`).pluck(),
  nthNewest: db.prepare(
    `SELECT created_at, id FROM workflow_runs WHERE workflow_id = ? AND ${FINISHED} ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`,
  ),
  olderFinished: db
    .prepare(`SELECT id FROM workflow_runs WHERE workflow_id = ? AND ${FINISHED} AND (created_at, id) < (?, ?) LIMIT ?`)
    .pluck(),
  deleteSteps: db.prepare('DELETE FROM workflow_run_steps WHERE run_id IN (SELECT value FROM json_each(?))'),
  deleteFinished: db.prepare(`DELETE FROM workflow_runs WHERE id IN (SELECT value FROM json_each(?)) AND ${FINISHED}`),
});
