// The Mongo RunStore, twin of sqlite-run-store.adapter.ts method for method; document mapping and shared
// filters are in mongo-run-documents.ts, concurrency places in mongo-run-slots.ts.
import { Connection, Model } from 'mongoose';
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
import { CANCELED_BEFORE_START, canceledWhileWaiting, Run, RunStatus, TERMINAL_RUN_STATUSES } from '../../domain/run.model';
import { RunError, StepRecord } from '../../domain/step.model';
import { isDuplicateKey } from './mongo-connection';
import { MongoMembershipScope } from './mongo-membership-store.adapter';
import { claimable, json, pageAfter, stepUpserts, toRun, toRunDoc, toStep } from './mongo-run-documents';
import { MongoRunSlots } from './mongo-run-slots';
import { RunDoc, RunStepDoc, workflowModels } from './workflows.schema';

/**
 * Runs and steps in two collections. Claims, renewals and completion are single conditional
 * updates on the run document, which is what makes them safe between worker processes. A
 * concurrency limit is one document per workflow listing the runs that hold a place until their
 * leases end (MongoRunSlots).
 */
export class MongoRunStore extends RunStore {
  private readonly runs: Model<RunDoc>;
  private readonly steps: Model<RunStepDoc>;
  private readonly slots: MongoRunSlots;
  private readonly workflowMembers: MongoMembershipScope;

  constructor(connection: Connection) {
    super();
    const models = workflowModels(connection);
    this.runs = models.runs;
    this.steps = models.steps;
    this.slots = new MongoRunSlots(connection);
    this.workflowMembers = new MongoMembershipScope(connection, 'workflow');
  }

  async byIdempotencyKey(workflowId: string, key: string, since: Date): Promise<Run | null> {
    const earlier = await this.runs.findOne({ workflowId, idempotencyKey: key, createdAt: { $gte: since } }).lean<RunDoc>();
    return earlier ? toRun(earlier) : null;
  }

  async create(run: Run, reuseSince: Date): Promise<{ created: boolean; run: Run }> {
    if (run.idempotencyKey) {
      const earlier = await this.runs.findOne({ workflowId: run.workflowId, idempotencyKey: run.idempotencyKey }).lean<RunDoc>();
      if (earlier && earlier.createdAt >= reuseSince) return { created: false, run: toRun(earlier) };
      if (earlier) await this.runs.updateOne({ _id: earlier._id }, { $set: { idempotencyKey: null } });
    }
    try {
      await this.runs.create(toRunDoc(run));
      if (run.steps.length) await this.writeSteps(run.id, run.steps);
    } catch (error) {
      // Two requests with one key raced: the unique index let one in; answer with that one.
      if (isDuplicateKey(error) && run.idempotencyKey) {
        const winner = await this.runs.findOne({ workflowId: run.workflowId, idempotencyKey: run.idempotencyKey }).lean<RunDoc>();
        if (winner) return { created: false, run: toRun(winner) };
      }
      throw error;
    }
    return { created: true, run };
  }

  async status(id: string): Promise<RunStatus | null> {
    return (await this.runs.findById(id, { status: 1 }).lean<Pick<RunDoc, 'status'>>())?.status ?? null;
  }

  async get(id: string): Promise<Run | null> {
    const [doc, steps] = await Promise.all([
      this.runs.findById(id).lean<RunDoc>(),
      this.steps.find({ runId: id }).sort({ position: 1 }).lean<RunStepDoc[]>(),
    ]);
    return doc ? toRun(doc, steps.map(toStep)) : null;
  }

  async list(filter: RunFilter, page: PageRequest): Promise<Page<Run>> {
    const query: Record<string, unknown> = {};
    if (filter.visibleTo) {
      const visible = [...(await this.workflowMembers.roles(filter.visibleTo)).keys()];
      query.workflowId = filter.workflowId ? (visible.includes(filter.workflowId) ? filter.workflowId : { $in: [] }) : { $in: visible };
    } else if (filter.workflowId) {
      query.workflowId = filter.workflowId;
    }
    if (filter.status) query.status = filter.status;
    if (filter.parentRunId) query.parentRunId = filter.parentRunId;
    const [docs, total] = await Promise.all([
      this.runs
        .find(query, { definitionJson: 0, outputJson: 0, sealedInput: 0 })
        .sort({ createdAt: -1, _id: -1 })
        .skip(page.offset)
        .limit(page.limit)
        .lean<RunDoc[]>(),
      this.runs.countDocuments(query),
    ]);
    return { items: docs.map((doc) => toRun(doc)), total };
  }

  async claim(
    id: string,
    owner: string,
    leaseUntil: Date,
    now: Date,
    maxRunning?: number,
  ): Promise<Run | typeof AT_CONCURRENCY_LIMIT | null> {
    let slotHeld = false;
    if (maxRunning !== undefined) {
      const candidate = await this.runs.findOne(claimable(id, owner, now), { workflowId: 1 }).lean<Pick<RunDoc, 'workflowId'>>();
      if (!candidate) return null;
      if (!(await this.slots.take(candidate.workflowId, id, leaseUntil, now, maxRunning))) return AT_CONCURRENCY_LIMIT;
      slotHeld = true;
    }
    const doc = await this.runs
      .findOneAndUpdate(
        claimable(id, owner, now),
        [
          {
            $set: {
              status: 'running',
              leaseOwner: owner,
              leaseExpiresAt: leaseUntil,
              resumeAt: null,
              slotHeld,
              parked: false,
              startedAt: { $ifNull: ['$startedAt', now] },
              claims: { $add: [{ $ifNull: ['$claims', 0] }, 1] },
            },
          },
        ],
        { returnDocument: 'after' },
      )
      .lean<RunDoc>();
    if (!doc) {
      // Taken by another worker between the two steps: give the place back.
      if (slotHeld)
        await this.slots.free({
          _id: id,
          workflowId: (await this.runs.findById(id, { workflowId: 1 }).lean<RunDoc>())?.workflowId ?? '',
          slotHeld: true,
        });
      return null;
    }
    const run = toRun(doc);
    if (claimMayHaveSteps(run)) run.steps = (await this.steps.find({ runId: id }).sort({ position: 1 }).lean<RunStepDoc[]>()).map(toStep);
    return run;
  }

  async renewLease(id: string, owner: string, leaseUntil: Date): Promise<LeaseState> {
    const doc = await this.runs
      .findOneAndUpdate(
        { _id: id, leaseOwner: owner, status: 'running' },
        { $set: { leaseExpiresAt: leaseUntil } },
        { projection: { cancelRequested: 1, slotHeld: 1, workflowId: 1 } },
      )
      .lean<Pick<RunDoc, 'cancelRequested' | 'slotHeld' | 'workflowId'>>();
    if (!doc) return { held: false, cancelRequested: false };
    if (doc.slotHeld) await this.slots.renew(doc.workflowId, id, leaseUntil);
    return { held: true, cancelRequested: doc.cancelRequested === true };
  }

  async recordSteps(id: string, owner: string, steps: StepRecord[]): Promise<LeaseState> {
    const lease = await this.leaseOf(id, owner);
    if (lease.held && steps.length) await this.writeSteps(id, steps);
    return lease;
  }

  async complete(id: string, owner: string, steps: StepRecord[], completion: RunCompletion): Promise<Run | boolean> {
    if (!(await this.leaseOf(id, owner)).held) return false;
    if (steps.length) await this.writeSteps(id, steps);
    const ended = await this.leave(id, owner, {
      status: completion.status,
      errorJson: json(completion.error),
      outputJson: completion.output === undefined ? null : JSON.stringify(completion.output),
      finishedAt: completion.finishedAt,
    });
    if (ended && completion.keepStepData === false)
      await this.steps.updateMany({ runId: id }, { $set: { inputJson: null, outputJson: null, state: null, subStepsJson: null } });
    else if (ended && completion.status === 'succeeded' && completion.statesSealed !== false)
      await this.steps.updateMany({ runId: id, state: { $ne: null } }, { $set: { state: null } });
    return ended && completion.read ? ((await this.get(id)) ?? true) : ended;
  }

  async suspend(id: string, owner: string, steps: StepRecord[], resumeAt: Date, jobId: string): Promise<boolean> {
    if (!(await this.leaseOf(id, owner)).held) return false;
    if (steps.length) await this.writeSteps(id, steps);
    return this.leave(id, owner, { status: 'waiting', resumeAt, jobId }, { cancelRequested: { $ne: true } });
  }

  /**
   * The step first, as the compare-and-set that lets one decision through; then the run is made
   * due. A process lost between the two leaves the decision on the step, taken when the run's
   * timeout comes (the run resumes then and reads it).
   */
  async decideWaitingStep(
    id: string,
    nodeId: string,
    expectedState: string,
    decided: { state: string; output: unknown },
    jobId: string,
    now: Date,
  ): Promise<boolean> {
    const waiting = await this.runs.exists({ _id: id, status: 'waiting' });
    if (!waiting) return false;
    const step = await this.steps.updateOne(
      { runId: id, nodeId, status: 'waiting', state: expectedState },
      { $set: { state: decided.state, outputJson: decided.output === undefined ? null : JSON.stringify(decided.output) } },
    );
    if (step.modifiedCount === 0) return false;
    await this.runs.updateOne({ _id: id, status: 'waiting' }, { $set: { resumeAt: now, jobId } });
    return true;
  }

  async listWaitingSteps(filter: { type: string; visibleTo?: string }, limit: number): Promise<{ run: Run; step: StepRecord }[]> {
    const steps = await this.steps.find({ status: 'waiting', type: filter.type }, { state: 0, inputJson: 0 }).lean<RunStepDoc[]>();
    if (steps.length === 0) return [];
    const query: Record<string, unknown> = { _id: { $in: [...new Set(steps.map((s) => s.runId))] }, status: 'waiting' };
    if (filter.visibleTo) query.workflowId = { $in: [...(await this.workflowMembers.roles(filter.visibleTo)).keys()] };
    const runs = await this.runs
      .find(query, { definitionJson: 0, outputJson: 0, sealedInput: 0 })
      .sort({ createdAt: 1, _id: 1 })
      .lean<RunDoc[]>();
    const byRun = new Map<string, RunStepDoc[]>();
    for (const step of steps.sort((a, b) => a.position - b.position)) byRun.set(step.runId, [...(byRun.get(step.runId) ?? []), step]);
    return runs.flatMap((doc) => (byRun.get(doc._id) ?? []).map((step) => ({ run: toRun(doc), step: toStep(step) }))).slice(0, limit);
  }

  async release(id: string, owner: string): Promise<boolean> {
    return this.leave(id, owner, { status: 'queued' });
  }

  async requestCancel(id: string, now: Date): Promise<Run | null> {
    const current = await this.runs.findById(id, { status: 1 }).lean<Pick<RunDoc, 'status'>>();
    const waitingAt =
      current?.status === 'waiting'
        ? (await this.steps.findOne({ runId: id, status: 'waiting' }, { nodeId: 1 }).sort({ position: 1 }).lean<{ nodeId: string }>())
            ?.nodeId
        : undefined;
    const error = waitingAt ? canceledWhileWaiting(waitingAt) : CANCELED_BEFORE_START;
    // Conditional on the status read above: a run that moved on meanwhile is canceled as what it is now.
    const status = current?.status === 'waiting' ? ['waiting'] : ['queued'];
    const queued = await this.runs.updateOne(
      { _id: id, status: { $in: status } },
      { $set: { status: 'canceled', cancelRequested: true, finishedAt: now, resumeAt: null, errorJson: JSON.stringify(error) } },
    );
    if (queued.modifiedCount > 0 && waitingAt)
      await this.steps.updateMany({ runId: id, status: 'waiting' }, { $set: { status: 'canceled', finishedAt: now } });
    if (queued.modifiedCount === 0) {
      const running = await this.runs.updateOne({ _id: id, status: 'running' }, { $set: { cancelRequested: true } });
      // It left the status read above another way (a queued run claimed, a waiting one resumed): try once more as it is now.
      if (running.matchedCount === 0 && current && (current.status === 'queued' || current.status === 'waiting'))
        return this.requestCancel(id, now);
    }
    return this.get(id);
  }

  async park(id: string, jobId: string): Promise<boolean> {
    const result = await this.runs.updateOne({ _id: id, status: { $in: ['queued', 'waiting'] } }, { $set: { parked: true, jobId } });
    return result.matchedCount > 0;
  }

  async unparkOldest(workflowId: string, jobSuffix: string): Promise<Run | null> {
    const doc = await this.runs
      .findOneAndUpdate(
        { workflowId, parked: true, status: { $in: ['queued', 'waiting'] } },
        [{ $set: { parked: false, jobId: { $concat: ['$_id', jobSuffix] } } }],
        { sort: { createdAt: 1, _id: 1 }, returnDocument: 'after', projection: { definitionJson: 0, outputJson: 0, sealedInput: 0 } },
      )
      .lean<RunDoc>();
    return doc ? toRun(doc) : null;
  }

  async listQueued(createdBefore: Date, limit: number, after?: RunCursor): Promise<Run[]> {
    const docs = await this.runs
      .find(
        { status: 'queued', createdAt: { $lt: createdBefore }, ...pageAfter('createdAt', after) },
        { definitionJson: 0, sealedInput: 0 },
      )
      .sort({ createdAt: 1, _id: 1 })
      .limit(limit)
      .lean<RunDoc[]>();
    return docs.map((doc) => toRun(doc));
  }

  async listDueWaiting(dueBefore: Date, limit: number, after?: RunCursor): Promise<Run[]> {
    const docs = await this.runs
      .find(
        { status: 'waiting', resumeAt: { $lt: dueBefore }, ...pageAfter('resumeAt', after) },
        { definitionJson: 0, outputJson: 0, sealedInput: 0 },
      )
      .sort({ resumeAt: 1, _id: 1 })
      .limit(limit)
      .lean<RunDoc[]>();
    return docs.map((doc) => toRun(doc));
  }

  async listExpiredLeases(now: Date, limit: number): Promise<Run[]> {
    const docs = await this.runs
      .find({ status: 'running', leaseExpiresAt: { $lt: now } }, { definitionJson: 0, sealedInput: 0 })
      .sort({ createdAt: 1 })
      .limit(limit)
      .lean<RunDoc[]>();
    return docs.map((doc) => toRun(doc));
  }

  async requeueExpired(id: string, leaseOwner: string | null, jobId: string, now: Date): Promise<boolean> {
    const doc = await this.runs
      .findOneAndUpdate(
        { _id: id, status: 'running', leaseOwner, leaseExpiresAt: { $lt: now } },
        { $set: { status: 'queued', leaseOwner: null, leaseExpiresAt: null, slotHeld: false, jobId }, $inc: { leaseLosses: 1 } },
        { projection: { workflowId: 1, slotHeld: 1 } },
      )
      .lean<Pick<RunDoc, '_id' | 'workflowId' | 'slotHeld'>>();
    if (doc) await this.slots.free(doc);
    return doc !== null;
  }

  async queued({ workflowId, actingUserId }: QueuedFilter, upTo: number): Promise<QueuedRuns> {
    const filter = {
      status: 'queued',
      ...(workflowId === undefined ? {} : { workflowId }),
      ...(actingUserId === undefined ? {} : { actingUserId }),
    };
    const count = await this.runs.countDocuments(filter, { limit: upTo });
    if (count === 0) return { count, oldestCreatedAt: null };
    const oldest = await this.runs.findOne(filter, { createdAt: 1 }).sort({ createdAt: 1 }).lean<Pick<RunDoc, 'createdAt'>>();
    return { count, oldestCreatedAt: oldest?.createdAt ?? null };
  }

  async queuedPerUserMax(): Promise<number> {
    // Matches the partial index of queued runs by user (its filter is status: 'queued').
    const [fullest] = await this.runs.aggregate<{ n: number }>([
      { $match: { status: 'queued' } },
      { $group: { _id: '$actingUserId', n: { $sum: 1 } } },
      { $sort: { n: -1 } },
      { $limit: 1 },
    ]);
    return fullest?.n ?? 0;
  }

  async discardQueued(id: string): Promise<boolean> {
    const { deletedCount } = await this.runs.deleteOne({ _id: id, status: 'queued', claims: 0 });
    if (deletedCount === 0) return false;
    await this.steps.deleteMany({ runId: id });
    return true;
  }

  async setJobId(id: string, jobId: string): Promise<void> {
    await this.runs.updateOne({ _id: id, status: { $in: ['queued', 'waiting'] } }, { $set: { jobId } });
  }

  async abandon(id: string, error: RunError, now: Date): Promise<boolean> {
    const doc = await this.runs
      .findOneAndUpdate(
        { _id: id, status: { $in: ['queued', 'running', 'waiting'] } },
        {
          $set: {
            status: 'failed',
            errorJson: JSON.stringify(error),
            finishedAt: now,
            leaseOwner: null,
            leaseExpiresAt: null,
            resumeAt: null,
            slotHeld: false,
          },
        },
        { projection: { workflowId: 1, slotHeld: 1 } },
      )
      .lean<Pick<RunDoc, '_id' | 'workflowId' | 'slotHeld'>>();
    if (doc) await this.slots.free(doc);
    return doc !== null;
  }

  async deleteForWorkflow(workflowId: string): Promise<void> {
    const ids = (await this.runs.find({ workflowId }, { _id: 1 }).lean<{ _id: string }[]>()).map((d) => d._id);
    await this.steps.deleteMany({ runId: { $in: ids } });
    await this.runs.deleteMany({ workflowId });
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
    const finished = { $in: TERMINAL_RUN_STATUSES as string[] };
    const ids = new Set<string>();
    if (finishedBefore) {
      const expired = await this.runs
        .find({ status: finished, finishedAt: { $lt: finishedBefore } }, { _id: 1 })
        .limit(limit)
        .lean<{ _id: string }[]>();
      for (const doc of expired) ids.add(doc._id);
    }
    if (keepPerWorkflow) {
      const crowded = await this.runs.aggregate<{ _id: string }>([
        { $match: { status: finished } },
        { $group: { _id: '$workflowId', count: { $sum: 1 } } },
        { $match: { count: { $gt: keepPerWorkflow } } },
      ]);
      for (const { _id: workflowId } of crowded) {
        if (ids.size >= limit) break;
        const [cutoff] = await this.runs
          .find({ workflowId, status: finished }, { createdAt: 1 })
          .sort({ createdAt: -1, _id: -1 })
          .skip(keepPerWorkflow - 1)
          .limit(1)
          .lean<{ _id: string; createdAt: Date }[]>();
        if (!cutoff) continue;
        const older = await this.runs
          .find(
            {
              workflowId,
              status: finished,
              $or: [{ createdAt: { $lt: cutoff.createdAt } }, { createdAt: cutoff.createdAt, _id: { $lt: cutoff._id } }],
            },
            { _id: 1 },
          )
          .limit(limit - ids.size)
          .lean<{ _id: string }[]>();
        for (const doc of older) ids.add(doc._id);
      }
    }
    if (ids.size === 0) return 0;
    const list = [...ids];
    await this.steps.deleteMany({ runId: { $in: list } });
    return (await this.runs.deleteMany({ _id: { $in: list }, status: finished })).deletedCount;
  }

  /** Ends this owner's hold on a running run with `update`, giving back its concurrency place. */
  private async leave(id: string, owner: string, update: Record<string, unknown>, unless: Record<string, unknown> = {}): Promise<boolean> {
    const doc = await this.runs
      .findOneAndUpdate(
        { _id: id, leaseOwner: owner, status: 'running', ...unless },
        { $set: { ...update, leaseOwner: null, leaseExpiresAt: null, slotHeld: false } },
        { projection: { workflowId: 1, slotHeld: 1 } },
      )
      .lean<Pick<RunDoc, '_id' | 'workflowId' | 'slotHeld'>>();
    if (doc) await this.slots.free(doc);
    return doc !== null;
  }

  private async leaseOf(id: string, owner: string): Promise<LeaseState> {
    const doc = await this.runs
      .findById(id, { leaseOwner: 1, status: 1, cancelRequested: 1 })
      .lean<Pick<RunDoc, 'leaseOwner' | 'status' | 'cancelRequested'>>();
    return { held: doc?.status === 'running' && doc.leaseOwner === owner, cancelRequested: doc?.cancelRequested === true };
  }

  private async writeSteps(runId: string, steps: StepRecord[]): Promise<void> {
    await this.steps.bulkWrite(stepUpserts(runId, steps), { ordered: false });
  }
}
