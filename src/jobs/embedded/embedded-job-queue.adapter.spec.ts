import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { processNotices } from '../../common/process-notices';
import { StoreCommits } from '../../domain/store-commits.port';
import { SqliteCommitWatch } from '../../storage/embedded/commit-watch';
import { groupCommitOf } from '../../storage/embedded/group-commit';
import { openSqliteDatabase, SqliteDb } from '../../storage/embedded/sqlite-database';
import { EmbeddedJobQueue } from './embedded-job-queue.adapter';
import { EmbeddedJobQueueOptions } from './embedded-workers';
import { SqliteJobStore } from './sqlite-job-store.adapter';

/** What the embedded queue does beyond the shared contract: its lease rules. */
describe('EmbeddedJobQueue leases', () => {
  let dir: string;
  let db: SqliteDb;
  let store: SqliteJobStore;
  const queues: EmbeddedJobQueue[] = [];

  const createQueue = (options: Partial<EmbeddedJobQueueOptions> = {}) => {
    const queue = new EmbeddedJobQueue(store, {
      concurrency: 2,
      logger: pino({ level: 'silent' }),
      leaseMs: 300,
      pollIntervalMs: 60_000,
      shutdownGraceMs: 200,
      ...options,
    });
    queues.push(queue);
    return queue;
  };

  async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-embedded-queue-'));
    db = openSqliteDatabase(dir);
    store = new SqliteJobStore(db);
  });
  afterEach(async () => {
    await Promise.all(queues.splice(0).map((queue) => queue.close()));
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails a job whose worker died during its last attempt instead of running it again', async () => {
    const queue = createQueue();
    const id = await queue.enqueue('test.crash', {}, { attempts: 1 });
    await store.claim('test.crash', new Date(), new Date(Date.now() + 100), 'worker-that-died');
    let ran = false;
    queue.process('test.crash', async () => {
      ran = true;
    });

    await waitFor('the job to fail', async () => (await queue.state('test.crash', id)) === 'failed');
    expect(ran).toBe(false);
    expect((await store.get({ name: 'test.crash', id }))?.lastError).toMatch(/stopped before finishing/);
  });

  it('renews the lease of a long job so nobody else takes it', async () => {
    const queue = createQueue();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    queue.process('test.long', async () => {
      runs++;
      await gate;
    });
    const id = await queue.enqueue('test.long', {});
    await waitFor('the job to start', () => runs === 1);

    // Three lease lengths later the job must still be held, or this claim would take it.
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(await store.claim('test.long', new Date(), new Date(Date.now() + 1000), 'another-worker')).toBeNull();
    release();
    await waitFor('the job to complete', async () => (await queue.state('test.long', id)) === 'missing');
    expect(runs).toBe(1);
  });

  it('aborts a run whose lease another worker took over, and drops its outcome', async () => {
    const queue = createQueue({ leaseMs: 3000 });
    let signal!: AbortSignal;
    let finish!: () => void;
    queue.process('test.stolen', async (job) => {
      signal = job.signal;
      await new Promise<void>((resolve) => (finish = resolve));
    });
    const id = await queue.enqueue('test.stolen', {});
    await waitFor('the job to start', () => signal !== undefined);

    // Another worker takes the job over, as after this process stalled past its lease.
    db.prepare("UPDATE jobs SET lease_until = '2000-01-01T00:00:00.000Z' WHERE id = ?").run(id);
    const stolen = await store.claim('test.stolen', new Date(), new Date(Date.now() + 60_000), 'other-worker');
    expect(stolen?.id).toBe(id);

    await waitFor('the stale run to be aborted', () => signal.aborted);
    finish();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await store.get({ name: 'test.stolen', id })).toMatchObject({ state: 'active', leaseToken: 'other-worker' });
  });

  it("lets the lane's worker sleep while only other jobs wait (it once claimed and looked again without end)", async () => {
    const queue = createQueue({ concurrency: 1 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    queue.process('test.backlog', async () => {
      started++;
      await gate;
    });
    const share = { user: 'heavy', flow: 'one' };
    for (let i = 0; i < 5; i++) await queue.enqueue('test.backlog', { i }, { share });
    // The first job went to the lane (the user had nothing pending), and either worker may take it.
    await waitFor('the worker to be busy', () => started >= 1);
    const laneClaims = jest.spyOn(store, 'claim');
    const laneClaimsNow = () => laneClaims.mock.calls.filter((call) => call[4] === true).length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = laneClaimsNow();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Three jobs wait, none in the lane: nothing wakes its worker until one is.
    expect(laneClaimsNow()).toBe(before);
    release();
    await waitFor('the backlog to drain', () => started === 5);
  });

  it('says when a job is next due: a delayed one, one in turn, an expiring lease; for the lane, its own jobs only', async () => {
    const name = 'test.due';
    const now = new Date();
    const later = new Date(now.getTime() + 60_000);
    const job = (id: string, runAt: Date, share?: { user: string; flow: string }) => ({
      name,
      id,
      data: '{}',
      maxAttempts: 1,
      backoffMs: 0,
      runAt,
      ...(share ? { share } : {}),
    });
    expect(await store.nextDueAt(name)).toBeNull();
    await store.insert(job('delayed', later), now);
    expect(await store.nextDueAt(name)).toEqual(later);
    expect(await store.nextDueAt(name, true)).toBeNull();

    // The user had nothing pending: in turn and in the lane, due now.
    expect(await store.insert(job('light', now, { user: 'u', flow: 'f' }), now)).toEqual({ lane: true });
    expect(await store.nextDueAt(name)).toEqual(now);
    expect(await store.nextDueAt(name, true)).toEqual(now);

    const claimed = await store.claim(name, now, later, 'token');
    expect(claimed?.id).toBe('light');
    expect(await store.nextDueAt(name)).toEqual(later);
    expect(await store.nextDueAt(name, true)).toBeNull();
  });

  it('runs a job another process queued on the same file without waiting for its poll, unlinked (the split layout without Redis)', async () => {
    // Another process: its own connection to the file, queuing only (an APP_ROLE=api process).
    const otherDb = openSqliteDatabase(dir);
    try {
      const other = new SqliteJobStore(otherDb);
      // The process's one watch of other processes' commits, which its waiters share.
      const queue = createQueue({ commits: new SqliteCommitWatch(db) });
      const ran: unknown[] = [];
      queue.process('test.elsewhere', async (job) => {
        ran.push(job.data);
      });
      // The worker looked, found nothing, and sleeps until its poll (a minute here).
      await waitFor('the first look to end', async () => (await store.nextDueAt('test.elsewhere')) === null);
      await new Promise((resolve) => setTimeout(resolve, 50));

      const api = new EmbeddedJobQueue(other, { concurrency: 1, logger: pino({ level: 'silent' }), pollIntervalMs: 60_000 });
      queues.push(api);
      const id = await api.enqueue('test.elsewhere', { from: 'api' });
      await waitFor('the job to run', () => ran.length === 1);
      expect(ran).toEqual([{ from: 'api' }]);
      await waitFor('the job to complete', async () => (await queue.state('test.elsewhere', id)) === 'missing');
    } finally {
      await Promise.all(queues.splice(0).map((queue) => queue.close()));
      otherDb.close();
    }
  });

  it("listens to other processes' commits only while no process tells it of their jobs, and stops when closed", async () => {
    // Linked (npm start's processes, Redis), announcements wake it: the watch's timer may stop.
    const commits = new (class extends StoreCommits {
      readonly watched = true;
      listening = 0;
      onCommitElsewhere(): () => void {
        this.listening++;
        return () => void this.listening--;
      }
    })();
    const queue = createQueue({ commits });
    expect(commits.listening).toBe(0);
    queue.process('test.linked', async () => undefined);
    expect(commits.listening).toBe(1);

    const send = () => undefined;
    processNotices.connect(send, 1);
    try {
      expect(commits.listening).toBe(0);
    } finally {
      processNotices.disconnect(send);
    }
    expect(commits.listening).toBe(1);

    await queue.close();
    expect(commits.listening).toBe(0);
  });

  it('claims for every free slot in one write, each job under its own token, as many as wait', async () => {
    const name = 'test.some';
    const now = new Date();
    for (const id of ['a', 'b']) await store.insert({ name, id, data: '{}', maxAttempts: 1, backoffMs: 0, runAt: now }, now);
    const later = new Date(now.getTime() + 60_000);

    const claimed = await store.claimSome(name, now, later, ['t1', 't2', 't3', 't4']);

    expect(claimed.map(({ job, token }) => [job.id, token])).toEqual([
      ['a', 't1'],
      ['b', 't2'],
    ]);
    expect(await store.get({ name, id: 'b' })).toMatchObject({ state: 'active', leaseToken: 't2', attempts: 1 });
    expect(await store.claimSome(name, now, later, ['t5'])).toEqual([]);
  });

  it("completes the job in the transaction of the handler's last write when the handler says it is finishing", async () => {
    db.exec('CREATE TABLE outcomes (v TEXT)');
    const queue = createQueue();
    let jobAfterWrite: unknown = 'not seen';
    queue.process('test.finishing', async (job) => {
      const written = groupCommitOf(db).run(() => db.prepare("INSERT INTO outcomes (v) VALUES ('done')").run());
      job.finishing!();
      await written;
      // Committed with the write: by the time the write is stored, the job is gone too.
      jobAfterWrite = await store.get({ name: 'test.finishing', id: job.id });
    });
    const id = await queue.enqueue('test.finishing', {});
    await waitFor('the handler to finish', () => jobAfterWrite !== 'not seen');

    expect(jobAfterWrite).toBeNull();
    expect(await queue.state('test.finishing', id)).toBe('missing');
    expect(db.prepare('SELECT v FROM outcomes').pluck().all()).toEqual(['done']);
  });

  it('claims, in one write, every slot the jobs finishing in one turn free', async () => {
    const queue = createQueue({ concurrency: 4 });
    const takes: number[] = [];
    const claimSome = store.claimSome.bind(store);
    jest.spyOn(store, 'claimSome').mockImplementation(async (...args) => {
      const claimed = await claimSome(...args);
      if (claimed.length) takes.push(claimed.length);
      return claimed;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    queue.process('test.slots', async () => {
      started++;
      await released;
    });
    for (let i = 0; i < 8; i++) await queue.enqueue('test.slots', { i });
    await waitFor('four jobs to start', () => started === 4);

    // The four finish in one turn: their four slots are taken again by one claim, not one and then three.
    release();
    await waitFor('the next four to start', () => started === 8);

    expect(takes.slice(-1)).toEqual([4]);
  });

  it("makes the handler's first write inside the transaction that claims its job, and hands the handler what it took", async () => {
    db.exec('CREATE TABLE taken (job TEXT)');
    const queue = createQueue();
    const handed: unknown[] = [];
    let inClaim: unknown;
    const data: unknown[] = [];
    queue.process(
      'test.joined',
      async (job) => {
        handed.push(job.claimed);
        data.push(job.data);
      },
      {
        claiming: {
          claim: (job) => {
            data.push(job.data);
            // Called by the store while its claim's transaction is open: this write commits with the job's claim.
            inClaim = { inTransaction: db.inTransaction, state: db.prepare('SELECT state FROM jobs WHERE id = ?').pluck().get(job.id) };
            db.prepare('INSERT INTO taken (job) VALUES (?)').run(job.id);
            return { n: (job.data as { n: number }).n };
          },
          release: async () => undefined,
        },
      },
    );
    const id = await queue.enqueue('test.joined', { n: 7 });
    await waitFor('the handler to run', () => handed.length === 1);

    expect(inClaim).toEqual({ inTransaction: true, state: 'active' });
    expect(handed).toEqual([{ n: 7 }]);
    expect(db.prepare('SELECT job FROM taken').pluck().all()).toEqual([id]);
    // The job's data was parsed once, in its claim: the handler gets that same value.
    expect(data).toHaveLength(2);
    expect(data[1]).toBe(data[0]);
  });

  it('undoes alone a claim-time write that throws: the job is claimed and run without it', async () => {
    db.exec('CREATE TABLE taken (job TEXT)');
    const queue = createQueue();
    const handed: unknown[] = [];
    let tried = 0;
    queue.process(
      'test.refused',
      async (job) => {
        handed.push(job.claimed);
      },
      {
        claiming: {
          claim: (job) => {
            tried++;
            db.prepare('INSERT INTO taken (job) VALUES (?)').run(job.id);
            throw new Error('refused');
          },
          release: async () => undefined,
        },
      },
    );
    const id = await queue.enqueue('test.refused', {});
    await waitFor('the handler to run', () => handed.length === 1);

    // Tried with no savepoint first; its throw ran the claim again with the write in a savepoint of its own.
    expect(tried).toBe(2);
    expect(handed).toEqual([undefined]);
    expect(db.prepare('SELECT COUNT(*) FROM taken').pluck().get()).toBe(0);
    await waitFor('the job to complete', async () => (await queue.state('test.refused', id)) === 'missing');
  });

  it('gives back what a claim took when the queue stops before running its job', async () => {
    const queue = createQueue();
    const id = await queue.enqueue('test.stopped', {});
    const released: unknown[] = [];
    let ran = false;
    queue.process(
      'test.stopped',
      async () => {
        ran = true;
      },
      { claiming: { claim: () => 'taken', release: async (taken) => void released.push(taken) } },
    );
    // Closed in the turn the claim was asked for: the claim commits, then finds the queue stopping.
    await queue.close();

    expect(ran).toBe(false);
    expect(released).toEqual(['taken']);
    expect(await store.get({ name: 'test.stopped', id })).toMatchObject({ state: 'waiting', attempts: 0 });
  });

  it('hands back a job whose handler ignores the shutdown signal past the grace period', async () => {
    const queue = createQueue();
    let started = false;
    queue.process('test.stubborn', async () => {
      started = true;
      await new Promise(() => undefined);
    });
    const id = await queue.enqueue('test.stubborn', {}, { attempts: 1 });
    await waitFor('the job to start', () => started);

    await queue.close();

    expect(await store.get({ name: 'test.stubborn', id })).toMatchObject({ state: 'waiting', attempts: 0 });
  });

  it('runs a job more for each caller waiting on these jobs, at most three more per slot, the lane none', async () => {
    const queue = createQueue({ concurrency: 1 });
    let callers = 2;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    let done = 0;
    queue.process(
      'test.awaited',
      async () => {
        running++;
        await gate;
        running--;
        done++;
      },
      { extraSlots: () => callers },
    );
    for (let i = 0; i < 8; i++) await queue.enqueue('test.awaited', { i });
    await waitFor('a job for the slot and one for each waiting caller', () => running === 3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running).toBe(3);

    // More callers than three times the concurrency: the worker stops at four.
    callers = 50;
    await queue.enqueue('test.awaited', { i: 8 });
    await waitFor('the most slots one of concurrency gets', () => running === 4);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running).toBe(4);

    release();
    await waitFor('every job to run', () => done === 9);
  });
});
