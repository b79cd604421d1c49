import { AnyBulkWriteOperation, Connection, Model } from 'mongoose';
import { Page, PageRequest } from '../../common/pagination';
import type { WorkflowDefinition } from '../ports/workflow-definition';
import { CANCELED_BEFORE_START, LeaseState, Run, RunCompletion, RunError, RunFilter, RunStore, StepRecord } from '../ports/run-store.port';
import { isDuplicateKey } from './mongo-connection';
import { MongoMembershipScope } from './mongo-membership-store.adapter';
import { RunDoc, RunStepDoc, workflowModels } from './workflows.schema';

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));
const parsed = <T>(text: string | null | undefined): T | undefined => (text == null ? undefined : (JSON.parse(text) as T));

const toRun = (doc: RunDoc, steps: StepRecord[] = []): Run => ({
  id: doc._id,
  workflowId: doc.workflowId,
  runType: doc.runType,
  versionId: doc.versionId ?? null,
  version: doc.version ?? null,
  definition: parsed<WorkflowDefinition>(doc.definitionJson) ?? null,
  status: doc.status,
  input: parsed(doc.inputJson),
  startedBy: doc.startedBy,
  actingUserId: doc.actingUserId,
  idempotencyKey: doc.idempotencyKey ?? null,
  jobId: doc.jobId,
  createdAt: doc.createdAt,
  startedAt: doc.startedAt ?? null,
  finishedAt: doc.finishedAt ?? null,
  leaseOwner: doc.leaseOwner ?? null,
  leaseExpiresAt: doc.leaseExpiresAt ?? null,
  claims: doc.claims ?? 0,
  cancelRequested: doc.cancelRequested === true,
  error: parsed<RunError>(doc.errorJson) ?? null,
  steps,
});

const toStep = (doc: RunStepDoc): StepRecord => ({
  nodeId: doc.nodeId,
  position: doc.position,
  type: doc.type,
  version: doc.nodeVersion,
  status: doc.status,
  attempts: doc.attempts,
  startedAt: doc.startedAt ?? null,
  finishedAt: doc.finishedAt ?? null,
  ...(doc.outputJson != null ? { output: JSON.parse(doc.outputJson) } : {}),
  error: parsed(doc.errorJson) ?? null,
});

/**
 * Runs and steps in two collections. Claims, renewals and completion are single conditional
 * updates on the run document, which is what makes them safe between worker processes.
 */
export class MongoRunStore extends RunStore {
  private readonly runs: Model<RunDoc>;
  private readonly steps: Model<RunStepDoc>;
  private readonly workflowMembers: MongoMembershipScope;

  constructor(connection: Connection) {
    super();
    const models = workflowModels(connection);
    this.runs = models.runs;
    this.steps = models.steps;
    this.workflowMembers = new MongoMembershipScope(connection, 'workflow');
  }

  async create(run: Run, reuseSince: Date): Promise<{ created: boolean; run: Run }> {
    if (run.idempotencyKey) {
      const earlier = await this.runs.findOne({ workflowId: run.workflowId, idempotencyKey: run.idempotencyKey }).lean<RunDoc>();
      if (earlier && earlier.createdAt >= reuseSince) return { created: false, run: toRun(earlier) };
      if (earlier) await this.runs.updateOne({ _id: earlier._id }, { $set: { idempotencyKey: null } });
    }
    try {
      await this.runs.create(this.toDoc(run));
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
    const [docs, total] = await Promise.all([
      this.runs.find(query, { definitionJson: 0 }).sort({ createdAt: -1, _id: -1 }).skip(page.offset).limit(page.limit).lean<RunDoc[]>(),
      this.runs.countDocuments(query),
    ]);
    return { items: docs.map((doc) => toRun(doc)), total };
  }

  async claim(id: string, owner: string, leaseUntil: Date, now: Date): Promise<Run | null> {
    const doc = await this.runs
      .findOneAndUpdate(
        {
          _id: id,
          $or: [{ status: 'queued' }, { status: 'running', $or: [{ leaseExpiresAt: { $lt: now } }, { leaseOwner: owner }] }],
        },
        { $set: { status: 'running', leaseOwner: owner, leaseExpiresAt: leaseUntil, startedAt: now }, $inc: { claims: 1 } },
        { returnDocument: 'after' },
      )
      .lean<RunDoc>();
    if (!doc) return null;
    // A run claimed again restarts from its first node: steps of the lost attempt would mislead.
    if (doc.claims > 1) await this.steps.deleteMany({ runId: id });
    return toRun(doc);
  }

  async renewLease(id: string, owner: string, leaseUntil: Date): Promise<LeaseState> {
    const doc = await this.runs
      .findOneAndUpdate({ _id: id, leaseOwner: owner, status: 'running' }, { $set: { leaseExpiresAt: leaseUntil } }, { projection: { cancelRequested: 1 } })
      .lean<Pick<RunDoc, 'cancelRequested'>>();
    return doc ? { held: true, cancelRequested: doc.cancelRequested === true } : { held: false, cancelRequested: false };
  }

  async recordSteps(id: string, owner: string, steps: StepRecord[]): Promise<LeaseState> {
    const lease = await this.leaseOf(id, owner);
    if (lease.held && steps.length) await this.writeSteps(id, steps);
    return lease;
  }

  async complete(id: string, owner: string, steps: StepRecord[], completion: RunCompletion): Promise<boolean> {
    if (!(await this.leaseOf(id, owner)).held) return false;
    if (steps.length) await this.writeSteps(id, steps);
    const result = await this.runs.updateOne(
      { _id: id, leaseOwner: owner, status: 'running' },
      {
        $set: {
          status: completion.status,
          errorJson: json(completion.error),
          finishedAt: completion.finishedAt,
          leaseOwner: null,
          leaseExpiresAt: null,
        },
      },
    );
    return result.modifiedCount > 0;
  }

  async release(id: string, owner: string): Promise<boolean> {
    const result = await this.runs.updateOne(
      { _id: id, leaseOwner: owner, status: 'running' },
      { $set: { status: 'queued', leaseOwner: null, leaseExpiresAt: null } },
    );
    return result.modifiedCount > 0;
  }

  async requestCancel(id: string, now: Date): Promise<Run | null> {
    const queued = await this.runs.updateOne(
      { _id: id, status: 'queued' },
      { $set: { status: 'canceled', cancelRequested: true, finishedAt: now, errorJson: JSON.stringify(CANCELED_BEFORE_START) } },
    );
    if (queued.modifiedCount === 0) await this.runs.updateOne({ _id: id, status: 'running' }, { $set: { cancelRequested: true } });
    return this.get(id);
  }

  async listQueued(createdBefore: Date, limit: number): Promise<Run[]> {
    const docs = await this.runs.find({ status: 'queued', createdAt: { $lt: createdBefore } }, { definitionJson: 0 }).sort({ createdAt: 1 }).limit(limit).lean<RunDoc[]>();
    return docs.map((doc) => toRun(doc));
  }

  async listExpiredLeases(now: Date, limit: number): Promise<Run[]> {
    const docs = await this.runs.find({ status: 'running', leaseExpiresAt: { $lt: now } }, { definitionJson: 0 }).sort({ createdAt: 1 }).limit(limit).lean<RunDoc[]>();
    return docs.map((doc) => toRun(doc));
  }

  async requeueExpired(id: string, leaseOwner: string | null, jobId: string, now: Date): Promise<boolean> {
    const result = await this.runs.updateOne(
      { _id: id, status: 'running', leaseOwner, leaseExpiresAt: { $lt: now } },
      { $set: { status: 'queued', leaseOwner: null, leaseExpiresAt: null, jobId } },
    );
    return result.modifiedCount > 0;
  }

  async setJobId(id: string, jobId: string): Promise<void> {
    await this.runs.updateOne({ _id: id, status: 'queued' }, { $set: { jobId } });
  }

  async abandon(id: string, error: RunError, now: Date): Promise<boolean> {
    const result = await this.runs.updateOne(
      { _id: id, status: { $in: ['queued', 'running'] } },
      { $set: { status: 'failed', errorJson: JSON.stringify(error), finishedAt: now, leaseOwner: null, leaseExpiresAt: null } },
    );
    return result.modifiedCount > 0;
  }

  async deleteForWorkflow(workflowId: string): Promise<void> {
    const ids = (await this.runs.find({ workflowId }, { _id: 1 }).lean<{ _id: string }[]>()).map((d) => d._id);
    await this.steps.deleteMany({ runId: { $in: ids } });
    await this.runs.deleteMany({ workflowId });
  }

  private async leaseOf(id: string, owner: string): Promise<LeaseState> {
    const doc = await this.runs.findById(id, { leaseOwner: 1, status: 1, cancelRequested: 1 }).lean<Pick<RunDoc, 'leaseOwner' | 'status' | 'cancelRequested'>>();
    return { held: doc?.status === 'running' && doc.leaseOwner === owner, cancelRequested: doc?.cancelRequested === true };
  }

  private async writeSteps(runId: string, steps: StepRecord[]): Promise<void> {
    const operations: AnyBulkWriteOperation<RunStepDoc>[] = steps.map((step) => ({
      updateOne: {
        filter: { runId, nodeId: step.nodeId },
        update: {
          $set: {
            position: step.position,
            type: step.type,
            nodeVersion: step.version,
            status: step.status,
            attempts: step.attempts,
            startedAt: step.startedAt,
            finishedAt: step.finishedAt,
            outputJson: step.output === undefined ? null : JSON.stringify(step.output),
            errorJson: json(step.error),
          },
        },
        upsert: true,
      },
    }));
    await this.steps.bulkWrite(operations, { ordered: false });
  }

  private toDoc(run: Run): RunDoc {
    const { id, definition, input, error, steps: _steps, ...fields } = run;
    return { _id: id, ...fields, definitionJson: json(definition), inputJson: input === undefined ? null : JSON.stringify(input), errorJson: json(error) };
  }
}
