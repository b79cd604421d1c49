import { Connection, Model, Schema } from 'mongoose';
import { isDuplicateKey } from '../../storage/mongo/mongo-connection';
import { clipError } from '../job-policy';
import { fairPlace, NO_SHARE } from '../fair-turns';
import { JobShare, QueueDepth } from '../../domain/job-queue.port';
import { JobKey, JobStore, NewJob, StoredJob } from '../../domain/job-store.port';

/** The stored job, with its id as `jobId`: `_id` stays Mongo's, since ids are unique per job name only. */
type JobDoc = Omit<StoredJob, 'id' | 'share'> & { jobId: string; shareUser: string; shareFlow: string };

const jobSchema = new Schema<JobDoc>(
  {
    name: { type: String, required: true },
    jobId: { type: String, required: true },
    data: { type: String, required: true },
    state: { type: String, required: true, enum: ['waiting', 'active', 'failed'] },
    attempts: { type: Number, required: true },
    maxAttempts: { type: Number, required: true },
    backoffMs: { type: Number, required: true },
    runAt: { type: Date, required: true },
    leaseUntil: { type: Date, default: null },
    leaseToken: { type: String, default: null },
    lastError: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    shareUser: { type: String, default: '' },
    shareFlow: { type: String, default: '' },
    turn: { type: Number, default: 0 },
    lane: { type: Boolean, default: false },
  },
  { versionKey: false },
);
jobSchema.index({ name: 1, jobId: 1 }, { unique: true });
jobSchema.index({ name: 1, runAt: 1 }, { partialFilterExpression: { state: 'waiting' } });
jobSchema.index({ name: 1, leaseUntil: 1 }, { partialFilterExpression: { state: 'active' } });
jobSchema.index({ updatedAt: 1 }, { partialFilterExpression: { state: 'failed' } });
// Fair order (src/jobs/fair-turns.ts): the claim by turn, and the turn of a new job (the head, its user's flows).
jobSchema.index({ name: 1, turn: 1, runAt: 1, _id: 1 }, { partialFilterExpression: { state: 'waiting' } });
jobSchema.index({ name: 1, shareUser: 1, shareFlow: 1, turn: 1 }, { partialFilterExpression: { state: 'waiting' } });
jobSchema.index({ name: 1, shareUser: 1, state: 1 });

const toJob = (doc: JobDoc): StoredJob => ({
  name: doc.name,
  id: doc.jobId,
  data: doc.data,
  state: doc.state,
  attempts: doc.attempts,
  maxAttempts: doc.maxAttempts,
  backoffMs: doc.backoffMs,
  runAt: doc.runAt,
  leaseUntil: doc.leaseUntil ?? null,
  leaseToken: doc.leaseToken ?? null,
  lastError: doc.lastError ?? null,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
  share: { user: doc.shareUser ?? '', flow: doc.shareFlow ?? '' },
  turn: doc.turn ?? 0,
  lane: doc.lane ?? false,
});

export class MongoJobStore extends JobStore {
  private readonly jobs: Model<JobDoc>;
  private indexesReady?: Promise<unknown>;

  constructor(connection: Connection) {
    super();
    this.jobs = connection.models.Job ?? connection.model<JobDoc>('Job', jobSchema, 'jobs');
  }

  async insert(job: NewJob, now: Date): Promise<{ lane: boolean } | null> {
    // Idempotency rests on the unique (name, jobId) index: it must exist before the first insert.
    this.indexesReady ??= this.jobs.init();
    await this.indexesReady;
    const share = job.share ?? NO_SHARE;
    // Read, then inserted: two processes enqueueing at once may give two jobs one turn, which only orders them.
    const place = job.runAt <= now ? await this.fairPlaceOf(job.name, share) : { turn: 0, lane: false };
    const lane = place.lane && job.share !== undefined;
    try {
      const result = await this.jobs.updateOne(
        { name: job.name, jobId: job.id },
        {
          $setOnInsert: {
            name: job.name,
            jobId: job.id,
            data: job.data,
            state: 'waiting',
            attempts: 0,
            maxAttempts: job.maxAttempts,
            backoffMs: job.backoffMs,
            runAt: job.runAt,
            leaseUntil: null,
            leaseToken: null,
            lastError: null,
            createdAt: now,
            updatedAt: now,
            shareUser: share.user,
            shareFlow: share.flow,
            turn: place.turn,
            lane,
          },
        },
        { upsert: true },
      );
      return result.upsertedCount > 0 ? { lane } : null;
    } catch (error) {
      // Two concurrent upserts of the same key: one wins, the other hits the unique index.
      if (isDuplicateKey(error)) return null;
      throw error;
    }
  }

  async claim(name: string, now: Date, leaseUntil: Date, leaseToken: string, lane = false): Promise<StoredJob | null> {
    const filter = lane
      ? { name, state: 'waiting', lane: true, runAt: { $lte: now } }
      : {
          name,
          $or: [
            { state: 'waiting', runAt: { $lte: now } },
            { state: 'active', leaseUntil: { $lte: now } },
          ],
        };
    const doc = await this.jobs
      .findOneAndUpdate(
        filter,
        { $set: { state: 'active', leaseUntil, leaseToken, updatedAt: now }, $inc: { attempts: 1 } },
        { sort: { turn: 1, runAt: 1, _id: 1 }, returnDocument: 'after' },
      )
      .lean<JobDoc>();
    return doc ? toJob(doc) : null;
  }

  async renew(key: JobKey, leaseToken: string, leaseUntil: Date, now: Date): Promise<boolean> {
    return this.write(key, leaseToken, { $set: { leaseUntil, updatedAt: now } });
  }

  async complete(key: JobKey, leaseToken: string): Promise<boolean> {
    const result = await this.jobs.deleteOne(this.held(key, leaseToken));
    return result.deletedCount > 0;
  }

  async retry(key: JobKey, leaseToken: string, runAt: Date, error: string, now: Date): Promise<boolean> {
    return this.write(key, leaseToken, {
      $set: { state: 'waiting', runAt, turn: 0, leaseUntil: null, leaseToken: null, lastError: clipError(error), updatedAt: now },
    });
  }

  async fail(key: JobKey, leaseToken: string, error: string, now: Date): Promise<boolean> {
    return this.write(key, leaseToken, {
      $set: { state: 'failed', leaseUntil: null, leaseToken: null, lastError: clipError(error), updatedAt: now },
    });
  }

  async release(key: JobKey, leaseToken: string, now: Date): Promise<boolean> {
    return this.write(key, leaseToken, {
      $set: { state: 'waiting', leaseUntil: null, leaseToken: null, updatedAt: now },
      $inc: { attempts: -1 },
    });
  }

  async get(key: JobKey): Promise<StoredJob | null> {
    const doc = await this.jobs.findOne({ name: key.name, jobId: key.id }).lean<JobDoc>();
    return doc ? toJob(doc) : null;
  }

  async nextDueAt(name: string, lane = false): Promise<Date | null> {
    if (lane) {
      const next = await this.jobs
        .findOne({ name, state: 'waiting', lane: true }, { runAt: 1 })
        .sort({ runAt: 1 })
        .lean<Pick<JobDoc, 'runAt'>>();
      return next?.runAt ?? null;
    }
    const [waiting, leased] = await Promise.all([
      this.jobs.findOne({ name, state: 'waiting' }, { runAt: 1 }).sort({ runAt: 1 }).lean<Pick<JobDoc, 'runAt'>>(),
      this.jobs.findOne({ name, state: 'active' }, { leaseUntil: 1 }).sort({ leaseUntil: 1 }).lean<Pick<JobDoc, 'leaseUntil'>>(),
    ]);
    const times = [waiting?.runAt, leased?.leaseUntil].filter((t): t is Date => t instanceof Date);
    return times.length ? new Date(Math.min(...times.map((t) => t.getTime()))) : null;
  }

  async purgeFailed(before: Date): Promise<number> {
    const result = await this.jobs.deleteMany({ state: 'failed', updatedAt: { $lt: before } });
    return result.deletedCount;
  }

  async depth(name: string, now: Date): Promise<QueueDepth> {
    const [waiting, delayed, active, failed] = await Promise.all([
      this.jobs.countDocuments({ name, state: 'waiting', runAt: { $lte: now } }),
      this.jobs.countDocuments({ name, state: 'waiting', runAt: { $gt: now } }),
      this.jobs.countDocuments({ name, state: 'active' }),
      this.jobs.countDocuments({ name, state: 'failed' }),
    ]);
    return { waiting, delayed, active, failed };
  }

  async ping(): Promise<void> {
    await this.jobs.findOne({}, { _id: 1 }).lean();
  }

  private async fairPlaceOf(name: string, share: JobShare) {
    const inTurn = { name, state: 'waiting', turn: { $gt: 0 } };
    const [head, flowLast, userFlows, pending] = await Promise.all([
      this.jobs.findOne(inTurn, { turn: 1 }).sort({ turn: 1 }).lean<Pick<JobDoc, 'turn'>>(),
      this.jobs
        .findOne({ ...inTurn, shareUser: share.user, shareFlow: share.flow }, { turn: 1 })
        .sort({ turn: -1 })
        .lean<Pick<JobDoc, 'turn'>>(),
      this.jobs.distinct('shareFlow', { ...inTurn, shareUser: share.user }),
      this.jobs.exists({ name, shareUser: share.user, state: { $in: ['waiting', 'active'] } }),
    ]);
    return fairPlace({ head: head?.turn ?? 0, flowLast: flowLast?.turn ?? 0, userFlows: userFlows.length, userPending: pending !== null });
  }

  private held(key: JobKey, leaseToken: string) {
    return { name: key.name, jobId: key.id, state: 'active', leaseToken };
  }

  private async write(key: JobKey, leaseToken: string, update: Record<string, unknown>): Promise<boolean> {
    const result = await this.jobs.updateOne(this.held(key, leaseToken), update);
    return result.matchedCount > 0;
  }
}
