import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { JobContext } from '../../domain/job-queue.port';
import { groupCommitOf } from '../../storage/embedded/group-commit';
import { openSqliteDatabase, SqliteDb } from '../../storage/embedded/sqlite-database';
import { EmbeddedJobQueue } from './embedded-job-queue.adapter';
import { SqliteJobStore } from './sqlite-job-store.adapter';

/** A job whose handler staged its completion (JobContext.finishing): its slot, its lease, the drain at shutdown. */
describe('EmbeddedJobQueue, jobs finishing', () => {
  const CONCURRENCY = 2;
  let dir: string;
  let db: SqliteDb;
  let store: SqliteJobStore;
  let queue: EmbeddedJobQueue;

  async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** The handler's last write, with its job's completion staged beside it, as the run worker does. */
  function lastWrite(job: JobContext<unknown>): Promise<unknown> {
    const written = groupCommitOf(db).run(() => db.prepare('INSERT INTO outcomes (job) VALUES (?)').run(job.id));
    job.finishing!();
    return written;
  }

  async function enqueue(name: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) await queue.enqueue(name, { i });
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-embedded-finishing-'));
    db = openSqliteDatabase(dir);
    db.exec('CREATE TABLE outcomes (job TEXT)');
    store = new SqliteJobStore(db);
    queue = new EmbeddedJobQueue(store, {
      concurrency: CONCURRENCY,
      logger: pino({ level: 'silent' }),
      leaseMs: 300,
      pollIntervalMs: 60_000,
      shutdownGraceMs: 10_000,
    });
  });
  afterEach(async () => {
    await queue.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("claims the next jobs in the transaction of the finishing jobs' last writes: about one commit per slotful of jobs, not two", async () => {
    const jobs = 20;
    await enqueue('test.commits', jobs);
    // The group commit's batches from here on: each is one transaction, one commit.
    const group = groupCommitOf(db) as unknown as { commit(lockOrNothing: boolean): boolean; pending: unknown[] };
    const commit = group.commit.bind(group);
    let commits = 0;
    jest.spyOn(group, 'commit').mockImplementation((lockOrNothing) => {
      if (group.pending.length > 0) commits++;
      return commit(lockOrNothing);
    });
    queue.process('test.commits', async (job) => void (await lastWrite(job)));

    await waitFor('every job to complete', async () => {
      const { waiting, active } = await queue.depth('test.commits');
      return waiting + active === 0;
    });

    expect(db.prepare('SELECT COUNT(*) FROM outcomes').pluck().get()).toBe(jobs);
    // The first claim, then one commit per slotful: the slots' writes and completions and the next
    // claim (12 here, a last look for jobs among them); two a slotful before (22). Room for a stray write.
    expect(commits).toBeLessThanOrEqual(jobs / CONCURRENCY + 4);
  });

  it("claims for a finishing job's slot while its handler still runs, never more handlers than the slots not finishing, one finishing per slot", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let handlers = 0;
    let unfinished = 0;
    const most = { handlers: 0, unfinished: 0 };
    queue.process('test.overlap', async (job) => {
      handlers++;
      unfinished++;
      most.handlers = Math.max(most.handlers, handlers);
      most.unfinished = Math.max(most.unfinished, unfinished);
      // Work before the last write, in a later turn: the jobs of a claim are all running, none finishing.
      await new Promise((resolve) => setImmediate(resolve));
      const written = lastWrite(job);
      unfinished--;
      await written;
      // Work after the last write (the run worker's metrics and events): the job is complete, its handler not done.
      await gate;
      handlers--;
    });
    await enqueue('test.overlap', 10);

    await waitFor('the next slotful to start beside the finishing handlers', () => handlers === 2 * CONCURRENCY);
    // Every slot has its finishing handler and its job not finishing: nothing more is claimed.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(handlers).toBe(2 * CONCURRENCY);
    release();
    await waitFor('every job to run', () => db.prepare('SELECT COUNT(*) FROM outcomes').pluck().get() === 10 && handlers === 0);

    expect(most).toEqual({ handlers: 2 * CONCURRENCY, unfinished: CONCURRENCY });
  });

  it('waits at shutdown for a handler that returns after its completion was staged', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let staged = 0;
    let returned = 0;
    queue.process('test.drain', async (job) => {
      await lastWrite(job);
      staged++;
      await gate;
      returned++;
    });
    await enqueue('test.drain', 1);
    await waitFor('the job to be complete, its handler not done', () => staged === 1);

    let closed = false;
    const closing = queue.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    release();
    await closing;

    expect(returned).toBe(1);
  });

  it('stops renewing the lease of a job whose completion is staged, and does not abort its handler for it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let signal: AbortSignal | undefined;
    queue.process('test.renew', async (job) => {
      await lastWrite(job);
      signal = job.signal;
      await gate;
    });
    await enqueue('test.renew', 1);
    await waitFor('the job to be complete, its handler not done', () => signal !== undefined);

    // Three lease lengths: a renewal would find the job gone and take it for a lease lost to another worker.
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(signal!.aborted).toBe(false);
    release();
  });

  it('a staged completion the store refuses while the handler still works has a handler at once, so it is no unhandled rejection', async () => {
    // Node reports a rejected promise as unhandled when no handler is attached by the end of the turn
    // (Jest keeps such reports from the test's `process`): this one records when a handler is.
    let handled = false;
    class Watched<T> extends Promise<T> {
      override then<A = T, B = never>(
        onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
        onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
      ): Promise<A | B> {
        handled = true;
        return super.then(onFulfilled, onRejected);
      }
    }
    jest.spyOn(store, 'complete').mockImplementationOnce(() => Watched.reject(new Error('group commit failed')) as Promise<boolean>);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let staged = false;
    queue.process('test.refused', async (job) => {
      job.finishing!();
      staged = true;
      await gate;
    });
    await enqueue('test.refused', 1);
    await waitFor('the completion to be staged', () => staged);
    // The turn in which the refusal was staged has ended, the handler still waiting.
    await new Promise((resolve) => setImmediate(resolve));
    expect(handled).toBe(true);
    release();
  });
});
