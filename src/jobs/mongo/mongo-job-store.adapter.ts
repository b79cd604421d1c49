import { Connection, Model, Schema } from 'mongoose';
import { isDuplicateKey } from '../../storage/mongo/mongo-connection';
import { clipError } from '../job-policy';
import { QueueDepth } from '../../domain/job-queue.port';
import { JobKey, JobStore, NewJob, StoredJob } from '../../domain/job-store.port';

/** The stored job, with its id as `jobId`: `_id` stays Mongo's, since ids are unique per job name only. */
type JobDoc = Omit<StoredJob, 'id'> & { jobId: string };

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
  },
  { versionKey: false },
);
jobSchema.index({ name: 1, jobId: 1 }, { unique: true });
jobSchema.index({ name: 1, runAt: 1 }, { partialFilterExpression: { state: 'waiting' } });
jobSchema.index({ name: 1, leaseUntil: 1 }, { partialFilterExpression: { state: 'active' } });
jobSchema.index({ updatedAt: 1 }, { partialFilterExpression: { state: 'failed' } });

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
});

export class MongoJobStore extends JobStore {
  private readonly jobs: Model<JobDoc>;
  private indexesReady?: Promise<unknown>;

  constructor(connection: Connection) {
    super();
    this.jobs = connection.models.Job ?? connection.model<JobDoc>('Job', jobSchema, 'jobs');
  }

  async insert(job: NewJob, now: Date): Promise<boolean> {
    // Idempotency rests on the unique (name, jobId) index: it must exist before the first insert.
    this.indexesReady ??= this.jobs.init();
    await this.indexesReady;
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
          },
        },
        { upsert: true },
      );
      return result.upsertedCount > 0;
    } catch (error) {
      // Two concurrent upserts of the same key: one wins, the other hits the unique index.
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async claim(name: string, now: Date, leaseUntil: Date, leaseToken: string): Promise<StoredJob | null> {
    const doc = await this.jobs
      .findOneAndUpdate(
        {
          name,
          $or: [
            { state: 'waiting', runAt: { $lte: now } },
            { state: 'active', leaseUntil: { $lte: now } },
          ],
        },
        { $set: { state: 'active', leaseUntil, leaseToken, updatedAt: now }, $inc: { attempts: 1 } },
        { sort: { runAt: 1, _id: 1 }, returnDocument: 'after' },
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
      $set: { state: 'waiting', runAt, leaseUntil: null, leaseToken: null, lastError: clipError(error), updatedAt: now },
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

  async nextDueAt(name: string): Promise<Date | null> {
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

  private held(key: JobKey, leaseToken: string) {
    return { name: key.name, jobId: key.id, state: 'active', leaseToken };
  }

  private async write(key: JobKey, leaseToken: string, update: Record<string, unknown>): Promise<boolean> {
    const result = await this.jobs.updateOne(this.held(key, leaseToken), update);
    return result.matchedCount > 0;
  }
}
