import { AsyncLocalStorage } from 'node:async_hooks';
import type { JobShare } from '../domain/job-queue.port';

/**
 * Fair shares of the workers, the one rule both queues (embedded and Bull) follow: start-time fair
 * queueing over users, and over flows (workflows) within a user.
 *
 * Every job of a share gets a turn when it is enqueued; workers take waiting jobs in turn order
 * (equal turns first come, first served). A flow's next job takes its turn `flows` after the
 * flow's last waiting one, and never before the head (the lowest turn still waiting), where
 * `flows` is how many flows of its user have jobs waiting: each user advances one turn per job
 * whatever the number of their workflows, and within a user its workflows alternate. So a user
 * who queues 200 jobs holds turns head+1..head+200, and a user arriving next gets head+1: their
 * job is taken after at most one job of each user ahead, not after the 200. Turns only order
 * jobs: a lost update (two processes enqueueing at once) makes two jobs share a turn, never loses one.
 *
 * A job that waits for its time (a delay, a retry's backoff) has no turn (0): once due it goes
 * first, as it already waited its turn once.
 *
 * Fair order alone still leaves a newcomer waiting for a worker to free, which may take as long as
 * the slowest run ahead. So a job whose user has nothing waiting or running when it is enqueued
 * goes to the lane: every worker process runs up to its concurrency again of lane jobs, beside the
 * others, so a light user's run starts at once however long the heavy user's runs take. A heavy
 * user's jobs are not in the lane (they find their earlier ones pending), except the first of a
 * burst, so it serves light users. (On Bull, "running" is what was enqueued and has not finished
 * an attempt, forgotten once the head passes its turn: a worker killed mid-job leaves no lasting mark.)
 */
export interface FairState {
  /** The lowest turn waiting (0 when none). */
  head: number;
  /** The turn of the flow's last waiting job (0 when none). */
  flowLast: number;
  /** Flows of the same user with jobs waiting in turn, this flow included if it has any. */
  userFlows: number;
  /** Whether the user has any job waiting or running (of this name, in any process). */
  userPending: boolean;
}

export interface FairPlace {
  turn: number;
  lane: boolean;
}

/** Where a job of a share goes (see above). */
export function fairPlace(state: FairState): FairPlace {
  const flows = state.userFlows + (state.flowLast > 0 ? 0 : 1);
  return { turn: Math.max(state.head, state.flowLast) + flows, lane: !state.userPending };
}

/** The share of a job enqueued without one (file ingestion): one queue, first come first served, no lane. */
export const NO_SHARE: JobShare = { user: '', flow: '' };

/** The Bull queue that holds the lane jobs of a job name's queue. */
export const laneQueueName = (name: string): string => `${name}.lane`;

/**
 * The share of the work being done now, set around a run's execution, so that what the run asks of
 * pools it shares with other runs (the sandbox processes of Code nodes and expressions) is taken
 * in fair order too.
 */
export const workShare = new AsyncLocalStorage<JobShare>();

/**
 * A waiting list in memory taken in fair order (the same turns as the queues'; no lane): for a
 * pool of a few workers that many runs wait on. Linear in the list's length, which the runs of one
 * process bound (each waits for one evaluation at a time).
 */
export class FairWaitingList<T> {
  private readonly items: { item: T; share: JobShare; turn: number }[] = [];

  get length(): number {
    return this.items.length;
  }

  push(item: T, share: JobShare = workShare.getStore() ?? NO_SHARE): void {
    let flowLast = 0;
    const flows = new Set<string>();
    for (const waiting of this.items) {
      if (waiting.share.user !== share.user) continue;
      flows.add(waiting.share.flow);
      if (waiting.share.flow === share.flow) flowLast = Math.max(flowLast, waiting.turn);
    }
    const { turn } = fairPlace({ head: this.items[0]?.turn ?? 0, flowLast, userFlows: flows.size, userPending: true });
    const at = this.items.findIndex((waiting) => waiting.turn > turn);
    this.items.splice(at < 0 ? this.items.length : at, 0, { item, share, turn });
  }

  /** Whether anything of `user`'s is waiting. */
  holds(user: string): boolean {
    return this.items.some((waiting) => waiting.share.user === user);
  }

  shift(): T | undefined {
    return this.items.shift()?.item;
  }

  remove(item: T): void {
    const at = this.items.findIndex((waiting) => waiting.item === item);
    if (at >= 0) this.items.splice(at, 1);
  }

  /** Empties the list, oldest turn first. */
  drain(): T[] {
    return this.items.splice(0).map((waiting) => waiting.item);
  }
}
