// A workflow's concurrency places in Mongo, for the Mongo run store (mongo-run-store.adapter.ts).
import type { Collection } from 'mongodb';
import { Connection } from 'mongoose';
import type { RunDoc, RunSlotsDoc } from './workflows.schema';

/**
 * One document per workflow listing the runs that hold a place, each until its lease ends:
 * taking a place is one atomic update of that document, and a place whose holder died lapses
 * with its lease.
 */
export class MongoRunSlots {
  private readonly slots: Collection<RunSlotsDoc>;

  constructor(connection: Connection) {
    this.slots = connection.db!.collection<RunSlotsDoc>('workflow_run_slots');
  }

  /**
   * One atomic update of the workflow's slots document: holders whose lease ended are dropped,
   * then this run is added if fewer than `maxRunning` remain.
   */
  async take(workflowId: string, runId: string, until: Date, now: Date, maxRunning: number): Promise<boolean> {
    const live = {
      $filter: { input: { $ifNull: ['$holders', []] }, cond: { $and: [{ $gt: ['$$this.until', now] }, { $ne: ['$$this.runId', runId] }] } },
    };
    const doc = await this.slots.findOneAndUpdate(
      { _id: workflowId },
      [
        { $set: { holders: live } },
        {
          $set: {
            holders: {
              $cond: [{ $lt: [{ $size: '$holders' }, maxRunning] }, { $concatArrays: ['$holders', [{ runId, until }]] }, '$holders'],
            },
          },
        },
      ],
      { upsert: true, returnDocument: 'after' },
    );
    return doc?.holders.some((h) => h.runId === runId) ?? false;
  }

  /** Gives back the place of a run that held one. */
  async free(doc: Pick<RunDoc, '_id' | 'workflowId' | 'slotHeld'>): Promise<void> {
    if (doc.slotHeld) await this.slots.updateOne({ _id: doc.workflowId }, { $pull: { holders: { runId: doc._id } } });
  }

  /** Extends a holder's place to its renewed lease. */
  async renew(workflowId: string, runId: string, until: Date): Promise<void> {
    await this.slots.updateOne({ _id: workflowId, 'holders.runId': runId }, { $set: { 'holders.$.until': until } });
  }
}
