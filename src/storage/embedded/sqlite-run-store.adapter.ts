// The SQLite RunStore: its transactions and queries; its rows, row mapping and prepared statements are in sqlite-run-statements.ts.
import { Page, PageRequest } from '../../common/page';
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
import { CANCELED_BEFORE_START, canceledWhileWaiting, Run, RUN_STATUSES, RunStatus } from '../../domain/run.model';
import { RunError, StepRecord, StepStatus, stepJson } from '../../domain/step.model';
import { GroupCommit, groupCommitOf } from './group-commit';
import { fromSqlDate, SqliteDb, SqliteStatement, toSqlDate } from './sqlite-database';
import { json, LISTED_COLUMNS, pageAfter, prepareRunStatements, RunRow, StepRow, toRun, toStep } from './sqlite-run-statements';

/** What a claim of a run answers: the run, claimed; its workflow at its limit; or nothing to claim. */
type Claimed = Run | typeof AT_CONCURRENCY_LIMIT | null;

/**
 * One adapter of one port: the writes that are atomic together (group commit, transactions) stay here,
 * over the statements prepared once in sqlite-run-statements.ts.
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
    this.statements = prepareRunStatements(db);

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
      this.statements.insert.run(
        run.id,
        run.workflowId,
        run.runType,
        run.versionId,
        run.version,
        json(run.definition ?? undefined),
        run.status,
        json(run.input),
        run.sealedInput,
        run.startedBy,
        run.trigger,
        run.actingUserId,
        run.idempotencyKey,
        run.jobId,
        toSqlDate(run.createdAt),
        run.parentRunId,
        run.parentNodeId,
        run.depth,
        run.retryOf,
        json(run.nodeTest ?? undefined),
      );
      for (const step of run.steps) this.upsertStep(run.id, step);
      return { created: true, run };
    };

    // In a transaction that took the write lock first (group commit's IMMEDIATE), so that two
    // processes sharing the file cannot both count the same free place under a concurrency limit.
    // `mine`: also a run running under this owner's own live lease (claim), not inside its job's claim (claimWithin).
    this.claimRun = (id: string, owner: string, until: Date, now: Date, maxRunning?: number, mine = true): Claimed => {
      const at = { id, owner, until: toSqlDate(until), now: toSqlDate(now) };
      if (maxRunning !== undefined) {
        const claimable = this.statements[mine ? 'claimable' : 'claimableNew'].get(at) as { workflow_id: string } | undefined;
        if (!claimable) return null;
        if ((this.statements.runningOthers.get(claimable.workflow_id, at.now, id) as number) >= maxRunning) return AT_CONCURRENCY_LIMIT;
      }
      const row = this.statements[mine ? 'claim' : 'claimNew'].get(at) as RunRow | undefined;
      if (!row) return null;
      const run = toRun(row);
      if (claimMayHaveSteps(run)) run.steps = this.stepsOf(id);
      return run;
    };

    // The first step's write is the lease check (upsertStepLeased): a change, the lease is held and no cancel asked for. The
    // run's row is read only when there is no step to write or that write changed nothing (lease gone, or a cancel asked for,
    // and then the steps are still written): the same answer and the same writes as a read first.
    this.writeSteps = (id: string, owner: string, steps: StepRecord[]): LeaseState => {
      if (steps.length > 0 && this.statements.upsertStepLeased.run(id, owner, ...stepValues(steps[0])).changes > 0) {
        for (let i = 1; i < steps.length; i++) this.upsertStep(id, steps[i]);
        return { held: true, cancelRequested: false };
      }
      const lease = this.leaseOf(id, owner);
      if (lease.held) for (const step of steps) this.upsertStep(id, step);
      return lease;
    };

    // The conditional update is the lease check: when it changes nothing, no step is written either.
    this.completeRun = (id: string, owner: string, steps: StepRecord[], completion: RunCompletion): Run | boolean => {
      const { changes } = this.statements.complete.run(
        completion.status,
        json(completion.error ?? undefined),
        json(completion.output),
        toSqlDate(completion.finishedAt),
        id,
        owner,
      );
      if (changes === 0) return false;
      for (const step of steps) this.upsertStep(id, step);
      if (completion.keepStepData === false) this.statements.dropStepData.run(id);
      else if (completion.status === 'succeeded' && completion.statesSealed !== false) this.statements.dropStates.run(id);
      return completion.read ? (this.runOf(id) ?? true) : true;
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
      return this.runOf(id);
    });
  }

  /** Writes a run's rows: a few pages (GroupCommit.run's `few`). */
  private fewRows<T>(work: () => T): Promise<T> {
    return this.group.run(work, true);
  }

  /** A burst of webhooks accepted in one turn shares one WAL commit (group-commit.ts). */
  create(run: Run, reuseSince: Date): Promise<{ created: boolean; run: Run }> {
    return this.fewRows(() => this.insertRun(run, reuseSince));
  }

  /** The run's job inserted in the run's own write: one commit for both (the job store shares this connection). */
  override createWith(run: Run, reuseSince: Date, alongside: () => void): Promise<{ created: boolean; run: Run }> {
    return this.fewRows(() => {
      const stored = this.insertRun(run, reuseSince);
      if (stored.created) alongside();
      return stored;
    });
  }

  async byIdempotencyKey(workflowId: string, key: string, since: Date): Promise<Run | null> {
    return this.findByKey(workflowId, key, since);
  }

  async get(id: string): Promise<Run | null> {
    return this.runOf(id);
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
      // Written into the SQL, not bound: with partial indexes on `status = '...'`, SQLite prepares a
      // statement that binds the status again at every run of it (to see which index it may use).
      if (!RUN_STATUSES.includes(filter.status)) throw new Error(`not a run status: ${filter.status}`);
      where.push(`r.status = '${filter.status}'`);
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

  /** The two statements of one filter shape, prepared once: 8 shapes without a status, 6 x 8 with one. */
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
    return this.fewRows(() => this.claimRun(id, owner, leaseUntil, now, maxRunning));
  }

  override claimWithin(id: string, owner: string, leaseUntil: Date, now: Date, maxRunning?: number): Claimed {
    return this.claimRun(id, owner, leaseUntil, now, maxRunning, false);
  }

  async renewLease(id: string, owner: string, leaseUntil: Date): Promise<LeaseState> {
    const cancel = this.statements.renew.get(toSqlDate(leaseUntil), id, owner) as number | undefined;
    return cancel === undefined ? { held: false, cancelRequested: false } : { held: true, cancelRequested: cancel === 1 };
  }

  async recordSteps(id: string, owner: string, steps: StepRecord[]): Promise<LeaseState> {
    return this.fewRows(() => this.writeSteps(id, owner, steps));
  }

  async complete(id: string, owner: string, steps: StepRecord[], completion: RunCompletion): Promise<Run | boolean> {
    return this.fewRows(() => this.completeRun(id, owner, steps, completion));
  }

  async suspend(id: string, owner: string, steps: StepRecord[], resumeAt: Date, jobId: string): Promise<boolean> {
    return this.fewRows(() => this.suspendRun(id, owner, steps, resumeAt, jobId));
  }

  async decideWaitingStep(
    id: string,
    nodeId: string,
    expectedState: string,
    decided: { state: string; output: unknown },
    jobId: string,
    now: Date,
  ): Promise<boolean> {
    return this.fewRows(() => this.decideTx(id, nodeId, expectedState, decided, jobId, now));
  }

  async listWaitingSteps(filter: { type: string; visibleTo?: string }, limit: number): Promise<{ run: Run; step: StepRecord }[]> {
    const visible = filter.visibleTo !== undefined;
    let statement = this.waitingSteps.get(visible);
    if (!statement) {
      // From the waiting runs (an index) to their steps (the primary key): never a scan of all steps. A member's from their
      // workflows' waiting runs; anyone else's named: without a status index SQLite would rather scan the steps.
      statement = this.db.prepare(
        `SELECT ${LISTED_COLUMNS}, s.node_id AS s_node_id, s.position AS s_position, s.type AS s_type, s.node_version AS s_node_version,
           s.status AS s_status, s.attempts AS s_attempts, s.started_at AS s_started_at, s.output AS s_output
         FROM workflow_runs r ${visible ? '' : 'INDEXED BY workflow_runs_waiting'}
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
    return this.fewRows(() => {
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

  /** The run and its steps (get, and what complete and cancel answer with, read in their own write). */
  private runOf(id: string): Run | null {
    const row = this.statements.get.get(id) as RunRow | undefined;
    return row ? toRun(row, this.stepsOf(id)) : null;
  }

  private stepsOf(id: string): StepRecord[] {
    return (this.statements.steps.all(id) as StepRow[]).map(toStep);
  }

  private upsertStep(runId: string, step: StepRecord): void {
    this.statements.upsertStep.run(runId, ...stepValues(step));
  }
}

/** A step's values after run_id, in the order of upsertStep's columns. */
const stepValues = (step: StepRecord): unknown[] => [
  step.nodeId,
  step.position,
  step.type,
  step.version,
  step.status,
  step.attempts,
  toSqlDate(step.startedAt),
  toSqlDate(step.finishedAt),
  stepJson(step, 'input'),
  stepJson(step, 'output'),
  json(step.error ?? undefined),
  step.iterations ?? null,
  step.reused ? 1 : 0,
  step.state ?? null,
  step.subSteps?.length ? JSON.stringify(step.subSteps) : null,
];
