// Not split, though over 500 lines: one adapter of one port (RunStore) over two tables (runs and
// their steps), its SQL statements prepared once beside the row mapping they share. Split, one
// table's queries would be scattered over files that each need the same statements and rows.
import { Page, PageRequest } from '../../common/page';
import type { WorkflowDefinition } from '../../domain/workflow-definition.model';
import {
  AT_CONCURRENCY_LIMIT,
  claimMayHaveSteps,
  LeaseState,
  QueuedFilter,
  QueuedRuns,
  RunCompletion,
  RunCursor,
  RunFilter,
  RunStore,
} from '../../domain/run-store.port';
import { CANCELED_BEFORE_START, canceledWhileWaiting, Run, RunStatus, RunTrigger, RunType } from '../../domain/run.model';
import { RunError, StepRecord, StepStatus } from '../../domain/step.model';
import { GroupCommit, groupCommitOf } from './group-commit';
import { fromSqlDate, SqliteDb, SqliteStatement, toSqlDate } from './sqlite-database';

interface RunRow {
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

interface StepRow {
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

const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
const parsed = <T>(text: string | null | undefined): T | undefined => (text == null ? undefined : (JSON.parse(text) as T));

const toRun = (row: RunRow, steps: StepRecord[] = []): Run => ({
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

const toStep = (row: StepRow): StepRecord => ({
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

/** Runs the pruner may delete: finished ones only. */
const FINISHED = `('succeeded', 'failed', 'canceled')`;

/** The keyset of a page: from the start when there is no cursor (every id sorts after ''). */
const pageAfter = (after?: RunCursor) => ({ at: toSqlDate(after?.at ?? new Date(0)), id: after?.id ?? '' });

/** Every column but the test-run definition and the sealed input, which only the worker reads (through get), and the output. */
const SUMMARY_COLUMNS = `id, workflow_id, run_type, version_id, version, status, input, started_by, run_trigger, acting_user_id,
  idempotency_key, job_id, created_at, started_at, finished_at, lease_owner, lease_expires_at, claims, lease_losses, cancel_requested, error,
  resume_at, parent_run_id, parent_node_id, depth, retry_of, node_test`;
const LISTED_COLUMNS = SUMMARY_COLUMNS.split(',')
  .map((column) => `r.${column.trim()}`)
  .join(', ');

/**
 * Over 400 lines, on purpose: one adapter of one port, whose statements share the prepared set and
 * the connection's group commit; split across files they would hide which writes are atomic together.
 *
 * Runs in one table and their steps in another, so recording a step writes one small row instead
 * of rewriting the run. better-sqlite3 is synchronous: each write is one transaction (or one
 * savepoint of a group commit), no interleaving, which is what makes claim and lease checks atomic here.
 */
export class SqliteRunStore extends RunStore {
  private readonly statements;
  private readonly listings = new Map<string, { rows: SqliteStatement; total: SqliteStatement }>();
  /** The writes of a run's life go through the connection's group commit (group-commit.ts). */
  private readonly group: GroupCommit;
  private readonly insertRun;
  private readonly findByKey;
  private readonly claimRun;
  private readonly writeSteps;
  private readonly completeRun;
  private readonly suspendRun;
  private readonly cancelTx;
  private readonly decideTx;
  private readonly waitingSteps = new Map<boolean, SqliteStatement>();

  constructor(private readonly db: SqliteDb) {
    super();
    this.group = groupCommitOf(db);
    this.statements = {
      insert: db.prepare(
        `INSERT INTO workflow_runs (id, workflow_id, run_type, version_id, version, definition, status, input, sealed_input, started_by,
           run_trigger, acting_user_id, idempotency_key, job_id, created_at, started_at, finished_at, lease_owner, lease_expires_at,
           claims, cancel_requested, error, parent_run_id, parent_node_id, depth, retry_of, node_test)
         VALUES (@id, @workflow_id, @run_type, @version_id, @version, @definition, @status, @input, @sealed_input, @started_by,
           @run_trigger, @acting_user_id, @idempotency_key, @job_id, @created_at, NULL, NULL, NULL, NULL, 0, 0, NULL,
           @parent_run_id, @parent_node_id, @depth, @retry_of, @node_test)`,
      ),
      byIdempotencyKey: db.prepare('SELECT * FROM workflow_runs WHERE workflow_id = ? AND idempotency_key = ?'),
      forgetIdempotencyKey: db.prepare('UPDATE workflow_runs SET idempotency_key = NULL WHERE id = ?'),
      get: db.prepare('SELECT * FROM workflow_runs WHERE id = ?'),
      status: db.prepare('SELECT status FROM workflow_runs WHERE id = ?').pluck(),
      steps: db.prepare(
        `SELECT node_id, position, type, node_version, status, attempts, started_at, finished_at, input, output, error, iterations, reused, state, sub_steps
         FROM workflow_run_steps WHERE run_id = ? ORDER BY position`,
      ),
      claim: db.prepare(
        `UPDATE workflow_runs SET status = 'running', lease_owner = @owner, lease_expires_at = @until, resume_at = NULL, parked = 0,
           claims = claims + 1, started_at = COALESCE(started_at, @now)
         WHERE id = @id AND (status = 'queued' OR (status = 'waiting' AND resume_at <= @now)
           OR (status = 'running' AND (lease_expires_at < @now OR lease_owner = @owner)))
         RETURNING *`,
      ),
      claimable: db.prepare(
        `SELECT workflow_id FROM workflow_runs WHERE id = @id AND (status = 'queued' OR (status = 'waiting' AND resume_at <= @now)
           OR (status = 'running' AND (lease_expires_at < @now OR lease_owner = @owner)))`,
      ),
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
      upsertStep: db.prepare(
        `INSERT INTO workflow_run_steps (run_id, node_id, position, type, node_version, status, attempts, started_at, finished_at, input, output,
           error, iterations, reused, state, sub_steps)
         VALUES (@run_id, @node_id, @position, @type, @node_version, @status, @attempts, @started_at, @finished_at, @input, @output,
           @error, @iterations, @reused, @state, @sub_steps)
         ON CONFLICT (run_id, node_id) DO UPDATE SET position = excluded.position, type = excluded.type, node_version = excluded.node_version,
           status = excluded.status, attempts = excluded.attempts, started_at = excluded.started_at,
           finished_at = excluded.finished_at, input = excluded.input, output = excluded.output, error = excluded.error,
           iterations = excluded.iterations, reused = excluded.reused, state = excluded.state, sub_steps = excluded.sub_steps`,
      ),
      complete: db.prepare(
        `UPDATE workflow_runs SET status = @status, error = @error, output = @output, finished_at = @finished_at, lease_owner = NULL, lease_expires_at = NULL
         WHERE id = @id AND lease_owner = @owner AND status = 'running'`,
      ),
      dropStates: db.prepare('UPDATE workflow_run_steps SET state = NULL WHERE run_id = ? AND state IS NOT NULL'),
      dropStepData: db.prepare(
        'UPDATE workflow_run_steps SET input = NULL, output = NULL, state = NULL, sub_steps = NULL WHERE run_id = ?',
      ),
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
      waitingAt: db
        .prepare(`SELECT node_id FROM workflow_run_steps WHERE run_id = ? AND status = 'waiting' ORDER BY position LIMIT 1`)
        .pluck(),
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
      // Bounded counts over the partial indexes of queued runs (migration 210 for one workflow's).
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
        .prepare(
          `SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM workflow_runs WHERE status = 'queued' GROUP BY acting_user_id)`,
        )
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
      deleteStepsOfWorkflow: db.prepare(
        'DELETE FROM workflow_run_steps WHERE run_id IN (SELECT id FROM workflow_runs WHERE workflow_id = ?)',
      ),
      deleteRunsOfWorkflow: db.prepare('DELETE FROM workflow_runs WHERE workflow_id = ?'),
      finishedBefore: db.prepare(`SELECT id FROM workflow_runs WHERE status IN ${FINISHED} AND finished_at < ? LIMIT ?`).pluck(),
      crowded: db
        .prepare(`SELECT workflow_id FROM workflow_runs WHERE status IN ${FINISHED} GROUP BY workflow_id HAVING COUNT(*) > ?`)
        .pluck(),
      nthNewest: db.prepare(
        `SELECT created_at, id FROM workflow_runs WHERE workflow_id = ? AND status IN ${FINISHED} ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`,
      ),
      olderFinished: db
        .prepare(`SELECT id FROM workflow_runs WHERE workflow_id = ? AND status IN ${FINISHED} AND (created_at, id) < (?, ?) LIMIT ?`)
        .pluck(),
      deleteSteps: db.prepare('DELETE FROM workflow_run_steps WHERE run_id IN (SELECT value FROM json_each(?))'),
      deleteFinished: db.prepare(`DELETE FROM workflow_runs WHERE id IN (SELECT value FROM json_each(?)) AND status IN ${FINISHED}`),
    };

    this.findByKey = (workflowId: string, key: string, since: Date): Run | null => {
      const earlier = this.statements.byIdempotencyKey.get(workflowId, key) as RunRow | undefined;
      return earlier && earlier.created_at >= toSqlDate(since)! ? toRun(earlier) : null;
    };

    this.insertRun = (run: Run, reuseSince: Date): { created: boolean; run: Run } => {
      if (run.idempotencyKey) {
        const earlier = this.statements.byIdempotencyKey.get(run.workflowId, run.idempotencyKey) as RunRow | undefined;
        if (earlier && earlier.created_at >= toSqlDate(reuseSince)!) return { created: false, run: toRun(earlier) };
        if (earlier) this.statements.forgetIdempotencyKey.run(earlier.id);
      }
      this.statements.insert.run({
        id: run.id,
        workflow_id: run.workflowId,
        run_type: run.runType,
        version_id: run.versionId,
        version: run.version,
        definition: json(run.definition ?? undefined),
        status: run.status,
        input: json(run.input),
        sealed_input: run.sealedInput,
        started_by: run.startedBy,
        run_trigger: run.trigger,
        acting_user_id: run.actingUserId,
        idempotency_key: run.idempotencyKey,
        job_id: run.jobId,
        created_at: toSqlDate(run.createdAt),
        parent_run_id: run.parentRunId,
        parent_node_id: run.parentNodeId,
        depth: run.depth,
        retry_of: run.retryOf,
        node_test: json(run.nodeTest ?? undefined),
      });
      for (const step of run.steps) this.upsertStep(run.id, step);
      return { created: true, run };
    };

    // In a transaction that took the write lock first (group commit's IMMEDIATE), so that two
    // processes sharing the file cannot both count the same free place under a concurrency limit.
    this.claimRun = (id: string, owner: string, until: Date, now: Date, maxRunning?: number): Run | typeof AT_CONCURRENCY_LIMIT | null => {
      const at = { id, owner, until: toSqlDate(until), now: toSqlDate(now) };
      if (maxRunning !== undefined) {
        const claimable = this.statements.claimable.get(at) as { workflow_id: string } | undefined;
        if (!claimable) return null;
        if ((this.statements.runningOthers.get(claimable.workflow_id, at.now, id) as number) >= maxRunning) return AT_CONCURRENCY_LIMIT;
      }
      const row = this.statements.claim.get(at) as RunRow | undefined;
      if (!row) return null;
      const run = toRun(row);
      if (claimMayHaveSteps(run)) run.steps = this.stepsOf(id);
      return run;
    };

    this.writeSteps = (id: string, owner: string, steps: StepRecord[]): LeaseState => {
      const lease = this.leaseOf(id, owner);
      if (lease.held) for (const step of steps) this.upsertStep(id, step);
      return lease;
    };

    // The conditional update is the lease check: when it changes nothing, no step is written either.
    this.completeRun = (id: string, owner: string, steps: StepRecord[], completion: RunCompletion): boolean => {
      const { changes } = this.statements.complete.run({
        id,
        owner,
        status: completion.status,
        error: json(completion.error ?? undefined),
        output: json(completion.output),
        finished_at: toSqlDate(completion.finishedAt),
      });
      if (changes === 0) return false;
      for (const step of steps) this.upsertStep(id, step);
      if (completion.keepStepData === false) this.statements.dropStepData.run(id);
      else if (completion.status === 'succeeded') this.statements.dropStates.run(id);
      return true;
    };

    this.suspendRun = (id: string, owner: string, steps: StepRecord[], resumeAt: Date, jobId: string): boolean => {
      const { changes } = this.statements.suspend.run({ id, owner, resume_at: toSqlDate(resumeAt), job_id: jobId });
      if (changes === 0) return false;
      for (const step of steps) this.upsertStep(id, step);
      return true;
    };

    this.decideTx = db.transaction(
      (id: string, nodeId: string, expected: string, decided: { state: string; output: unknown }, jobId: string, now: Date): boolean => {
        const { changes } = this.statements.decideStep.run({
          id,
          node_id: nodeId,
          expected,
          state: decided.state,
          output: json(decided.output),
        });
        if (changes === 0) return false;
        this.statements.dueNow.run({ id, now: toSqlDate(now), job_id: jobId });
        return true;
      },
    );

    this.cancelTx = db.transaction((id: string, now: Date): Run | null => {
      const waitingAt =
        this.statements.status.get(id) === 'waiting' ? (this.statements.waitingAt.get(id) as string | undefined) : undefined;
      const error = waitingAt ? canceledWhileWaiting(waitingAt) : CANCELED_BEFORE_START;
      if (this.statements.cancelQueued.run(toSqlDate(now), JSON.stringify(error), id).changes === 0) {
        this.statements.cancelRunning.run(id);
      } else if (waitingAt) {
        this.statements.cancelWaitingStep.run(toSqlDate(now), id);
      }
      const row = this.statements.get.get(id) as RunRow | undefined;
      return row ? toRun(row, this.stepsOf(id)) : null;
    });
  }

  /** A burst of webhooks accepted in one turn shares one WAL commit (group-commit.ts). */
  create(run: Run, reuseSince: Date): Promise<{ created: boolean; run: Run }> {
    return this.group.run(() => this.insertRun(run, reuseSince));
  }

  async byIdempotencyKey(workflowId: string, key: string, since: Date): Promise<Run | null> {
    return this.findByKey(workflowId, key, since);
  }

  async get(id: string): Promise<Run | null> {
    const row = this.statements.get.get(id) as RunRow | undefined;
    return row ? toRun(row, this.stepsOf(id)) : null;
  }

  async status(id: string): Promise<RunStatus | null> {
    return (this.statements.status.get(id) as RunStatus | undefined) ?? null;
  }

  async list(filter: RunFilter, page: PageRequest): Promise<Page<Run>> {
    const where: string[] = [];
    const params: unknown[] = [];
    let join = '';
    if (filter.visibleTo) {
      join = `JOIN memberships m ON m.resource_type = 'workflow' AND m.resource_id = r.workflow_id AND m.user_id = ?`;
      params.push(filter.visibleTo);
    }
    if (filter.workflowId) {
      where.push('r.workflow_id = ?');
      params.push(filter.workflowId);
    }
    if (filter.status) {
      where.push('r.status = ?');
      params.push(filter.status);
    }
    if (filter.parentRunId) {
      where.push('r.parent_run_id = ?');
      params.push(filter.parentRunId);
    }
    const clause = `FROM workflow_runs r ${join} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
    const listing = this.listingFor(clause);
    const rows = listing.rows.all(...params, page.limit, page.offset) as RunRow[];
    return { items: rows.map((row) => toRun(row)), total: listing.total.get(...params) as number };
  }

  /** The two statements of one filter shape, prepared once: there are sixteen shapes at most. */
  private listingFor(clause: string) {
    let listing = this.listings.get(clause);
    if (!listing) {
      listing = {
        rows: this.db.prepare(`SELECT ${LISTED_COLUMNS} ${clause} ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?`),
        total: this.db.prepare(`SELECT COUNT(*) ${clause}`).pluck(),
      };
      this.listings.set(clause, listing);
    }
    return listing;
  }

  async claim(
    id: string,
    owner: string,
    leaseUntil: Date,
    now: Date,
    maxRunning?: number,
  ): Promise<Run | typeof AT_CONCURRENCY_LIMIT | null> {
    return this.group.run(() => this.claimRun(id, owner, leaseUntil, now, maxRunning));
  }

  async renewLease(id: string, owner: string, leaseUntil: Date): Promise<LeaseState> {
    const cancel = this.statements.renew.get(toSqlDate(leaseUntil), id, owner) as number | undefined;
    return cancel === undefined ? { held: false, cancelRequested: false } : { held: true, cancelRequested: cancel === 1 };
  }

  async recordSteps(id: string, owner: string, steps: StepRecord[]): Promise<LeaseState> {
    return this.group.run(() => this.writeSteps(id, owner, steps));
  }

  async complete(id: string, owner: string, steps: StepRecord[], completion: RunCompletion): Promise<boolean> {
    return this.group.run(() => this.completeRun(id, owner, steps, completion));
  }

  async suspend(id: string, owner: string, steps: StepRecord[], resumeAt: Date, jobId: string): Promise<boolean> {
    return this.group.run(() => this.suspendRun(id, owner, steps, resumeAt, jobId));
  }

  async decideWaitingStep(
    id: string,
    nodeId: string,
    expectedState: string,
    decided: { state: string; output: unknown },
    jobId: string,
    now: Date,
  ): Promise<boolean> {
    return this.group.run(() => this.decideTx(id, nodeId, expectedState, decided, jobId, now));
  }

  async listWaitingSteps(filter: { type: string; visibleTo?: string }, limit: number): Promise<{ run: Run; step: StepRecord }[]> {
    const visible = filter.visibleTo !== undefined;
    let statement = this.waitingSteps.get(visible);
    if (!statement) {
      // From the waiting runs (an index) to their steps (the primary key): never a scan of all steps.
      statement = this.db.prepare(
        `SELECT ${LISTED_COLUMNS}, s.node_id AS s_node_id, s.position AS s_position, s.type AS s_type, s.node_version AS s_node_version,
           s.status AS s_status, s.attempts AS s_attempts, s.started_at AS s_started_at, s.output AS s_output
         FROM workflow_runs r
         ${visible ? `JOIN memberships m ON m.resource_type = 'workflow' AND m.resource_id = r.workflow_id AND m.user_id = @user` : ''}
         JOIN workflow_run_steps s ON s.run_id = r.id AND s.status = 'waiting' AND s.type = @type
         WHERE r.status = 'waiting' ORDER BY r.created_at, r.id, s.position LIMIT @limit`,
      );
      this.waitingSteps.set(visible, statement);
    }
    const rows = statement.all({ type: filter.type, limit, ...(visible ? { user: filter.visibleTo } : {}) }) as (RunRow &
      Record<string, unknown>)[];
    return rows.map((row) => ({
      run: toRun(row),
      step: toStep({
        node_id: row.s_node_id as string,
        position: row.s_position as number,
        type: row.s_type as string,
        node_version: row.s_node_version as number,
        status: row.s_status as StepStatus,
        attempts: row.s_attempts as number,
        started_at: row.s_started_at as string | null,
        finished_at: null,
        input: null,
        output: row.s_output as string | null,
        error: null,
        iterations: null,
        reused: 0,
        state: null,
        sub_steps: null,
      }),
    }));
  }

  async release(id: string, owner: string): Promise<boolean> {
    return this.statements.release.run(id, owner).changes > 0;
  }

  async requestCancel(id: string, now: Date): Promise<Run | null> {
    return this.cancelTx(id, now);
  }

  async park(id: string, jobId: string): Promise<boolean> {
    return this.statements.park.run(jobId, id).changes > 0;
  }

  async unparkOldest(workflowId: string, jobSuffix: string): Promise<Run | null> {
    const row = this.statements.unparkOldest.get({ workflow_id: workflowId, suffix: jobSuffix }) as RunRow | undefined;
    return row ? toRun(row) : null;
  }

  async listQueued(createdBefore: Date, limit: number, after?: RunCursor): Promise<Run[]> {
    return (this.statements.listQueued.all({ before: toSqlDate(createdBefore), limit, ...pageAfter(after) }) as RunRow[]).map((row) =>
      toRun(row),
    );
  }

  async listDueWaiting(dueBefore: Date, limit: number, after?: RunCursor): Promise<Run[]> {
    return (this.statements.listDueWaiting.all({ before: toSqlDate(dueBefore), limit, ...pageAfter(after) }) as RunRow[]).map((row) =>
      toRun(row),
    );
  }

  async listExpiredLeases(now: Date, limit: number): Promise<Run[]> {
    return (this.statements.listExpired.all(toSqlDate(now), limit) as RunRow[]).map((row) => toRun(row));
  }

  async requeueExpired(id: string, leaseOwner: string | null, jobId: string, now: Date): Promise<boolean> {
    return this.statements.requeue.run({ id, owner: leaseOwner, job_id: jobId, now: toSqlDate(now) }).changes > 0;
  }

  async queued({ workflowId, actingUserId }: QueuedFilter, upTo: number): Promise<QueuedRuns> {
    const { queuedCount, queuedOldest, queuedCountOf, queuedOldestOf, queuedCountBy, queuedOldestBy } = this.statements;
    const [countOf, oldestOf, key] =
      workflowId !== undefined
        ? [queuedCountOf, queuedOldestOf, [workflowId]]
        : actingUserId !== undefined
          ? [queuedCountBy, queuedOldestBy, [actingUserId]]
          : [queuedCount, queuedOldest, []];
    const count = countOf.get(...key, upTo) as number;
    if (count === 0) return { count, oldestCreatedAt: null };
    const oldest = oldestOf.get(...key) as string | null;
    return { count, oldestCreatedAt: oldest === null ? null : fromSqlDate(oldest) };
  }

  async queuedPerUserMax(): Promise<number> {
    return this.statements.queuedPerUserMax.get() as number;
  }

  async discardQueued(id: string): Promise<boolean> {
    return this.group.run(() => {
      this.statements.discardSteps.run(id, id);
      return this.statements.discard.run(id).changes > 0;
    });
  }

  async setJobId(id: string, jobId: string): Promise<void> {
    this.statements.setJobId.run(jobId, id);
  }

  async abandon(id: string, error: RunError, now: Date): Promise<boolean> {
    return this.statements.abandon.run(JSON.stringify(error), toSqlDate(now), id).changes > 0;
  }

  async deleteForWorkflow(workflowId: string): Promise<void> {
    this.db.transaction(() => {
      this.statements.deleteStepsOfWorkflow.run(workflowId);
      this.statements.deleteRunsOfWorkflow.run(workflowId);
    })();
  }

  async prune({
    finishedBefore,
    keepPerWorkflow,
    limit,
  }: {
    finishedBefore?: Date;
    keepPerWorkflow?: number;
    limit: number;
  }): Promise<number> {
    return this.db.transaction(() => {
      const ids = new Set<string>(finishedBefore ? (this.statements.finishedBefore.all(toSqlDate(finishedBefore), limit) as string[]) : []);
      if (keepPerWorkflow) {
        for (const workflowId of this.statements.crowded.all(keepPerWorkflow) as string[]) {
          if (ids.size >= limit) break;
          const cutoff = this.statements.nthNewest.get(workflowId, keepPerWorkflow - 1) as { created_at: string; id: string };
          for (const id of this.statements.olderFinished.all(workflowId, cutoff.created_at, cutoff.id, limit - ids.size) as string[])
            ids.add(id);
        }
      }
      if (ids.size === 0) return 0;
      const list = JSON.stringify([...ids]);
      this.statements.deleteSteps.run(list);
      return this.statements.deleteFinished.run(list).changes;
    })();
  }

  private leaseOf(id: string, owner: string): LeaseState {
    const row = this.statements.lease.get(id) as Pick<RunRow, 'lease_owner' | 'status' | 'cancel_requested'> | undefined;
    const held = row !== undefined && row.status === 'running' && row.lease_owner === owner;
    return { held, cancelRequested: row?.cancel_requested === 1 };
  }

  private stepsOf(id: string): StepRecord[] {
    return (this.statements.steps.all(id) as StepRow[]).map(toStep);
  }

  private upsertStep(runId: string, step: StepRecord): void {
    this.statements.upsertStep.run({
      run_id: runId,
      node_id: step.nodeId,
      position: step.position,
      type: step.type,
      node_version: step.version,
      status: step.status,
      attempts: step.attempts,
      started_at: toSqlDate(step.startedAt),
      finished_at: toSqlDate(step.finishedAt),
      input: json(step.input),
      output: json(step.output),
      error: json(step.error ?? undefined),
      iterations: step.iterations ?? null,
      reused: step.reused ? 1 : 0,
      state: step.state ?? null,
      sub_steps: step.subSteps?.length ? JSON.stringify(step.subSteps) : null,
    });
  }
}
