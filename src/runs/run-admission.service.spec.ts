import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { AppConfig } from '../config/app-config';
import type { JobContext } from '../domain/job-queue.port';
import { Run } from '../domain/run.model';
import type { WorkflowStore } from '../domain/workflow-store.port';
import { EmbeddedJobQueue } from '../jobs/embedded/embedded-job-queue.adapter';
import { SqliteJobStore } from '../jobs/embedded/sqlite-job-store.adapter';
import { Metrics } from '../metrics/metrics.service';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';
import { REFUSAL_HOLD_MIN_MS, RunAdmission, refusalHoldMs } from './run-admission.service';
import { RUN_JOB, RunJobData } from './run.job';
import { aQueuedRun } from '../../test/utils/runs';

/** Counts the connection's commits: better-sqlite3 transactions begun while none is open (as test/bench/lib/count-commits.js). */
function countCommits(db: SqliteDb): () => number {
  let commits = 0;
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: unknown[]) => unknown) => {
    const made = transaction(fn);
    const counted =
      (run: (...args: unknown[]) => unknown) =>
      (...args: unknown[]) => {
        if (!db.inTransaction) commits++;
        return run(...args);
      };
    return Object.assign(counted(made), {
      deferred: counted(made.deferred),
      immediate: counted(made.immediate),
      exclusive: counted(made.exclusive),
    });
  }) as typeof db.transaction;
  return () => commits;
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A caller's run accepted on SQLite with the embedded queue in the same process (one `all` process). */
describe('RunAdmission with the embedded queue on SQLite', () => {
  let dir: string;
  let db: SqliteDb;
  let commits: () => number;
  let runs: SqliteRunStore;
  let jobs: SqliteJobStore;
  let queue: EmbeddedJobQueue;
  let admission: RunAdmission;
  /** What each started handler was handed: its run as claimed with its job, if it was. */
  let started: { runId: string; claimed?: Run }[];
  let release: () => void;

  const caller = (workflowId = 'wf_1') =>
    aQueuedRun({ workflowId, runType: 'production', versionId: 'v1', version: 1, input: {}, startedBy: 'usr_1', actingUserId: 'usr_1' });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-admission-'));
    db = openSqliteDatabase(dir);
    commits = countCommits(db);
    runs = new SqliteRunStore(db);
    jobs = new SqliteJobStore(db);
    queue = new EmbeddedJobQueue(jobs, { concurrency: 1, logger: pino({ level: 'silent' }), leaseMs: 30_000, pollIntervalMs: 60_000 });
    const limits = { RUNS_MAX_QUEUED: 0, RUNS_MAX_QUEUED_PER_WORKFLOW: 0, RUNS_MAX_QUEUED_PER_USER: 0, RUNS_ENQUEUE_TIMEOUT_MS: 5000 };
    admission = new RunAdmission(
      runs,
      {} as WorkflowStore,
      queue,
      pino({ level: 'silent' }),
      limits as unknown as AppConfig,
      new Metrics(),
    );
    started = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    release = open;
    queue.process(
      RUN_JOB,
      async (job: JobContext<RunJobData>) => {
        started.push({ runId: job.data.runId, claimed: job.claimed as Run | undefined });
        await gate;
      },
      {
        // The run's claim in its job's claim, as the run worker makes it (RunWorker.claiming).
        claiming: {
          claim: ({ data }) => {
            const run = runs.claimWithin((data as RunJobData).runId, 'worker-1', new Date(Date.now() + 30_000), new Date());
            return run && typeof run === 'object' ? run : undefined;
          },
          release: async () => undefined,
        },
      },
    );
    // The worker's first look, at an empty queue, is behind us.
    await turns();
  });

  afterEach(async () => {
    release();
    await queue.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with a slot free, stores the run claimed, with its job under a lease, in the one commit of its accept, and starts it', async () => {
    const before = commits();
    const run = caller();

    const accepted = await admission.accept(run, 'caller', {});

    // One commit: the run, its job and both claims. The handler started once it committed, with no claim of its own.
    expect(accepted.created).toBe(true);
    expect(commits() - before).toBe(1);
    expect(started).toEqual([{ runId: run.id, claimed: expect.objectContaining({ id: run.id, status: 'running' }) }]);
    expect(await runs.status(run.id)).toBe('running');
    expect(await jobs.get({ name: RUN_JOB, id: run.id })).toMatchObject({ state: 'active', attempts: 1, leaseToken: expect.any(String) });
  });

  it('with every slot taken, stores the job waiting and claims it once a slot frees, as before', async () => {
    const first = caller();
    await admission.accept(first, 'caller', {});
    const second = caller();

    await admission.accept(second, 'caller', {});
    await turns();

    expect(started.map((one) => one.runId)).toEqual([first.id]);
    expect(await jobs.get({ name: RUN_JOB, id: second.id })).toMatchObject({ state: 'waiting', attempts: 0 });
    expect(await runs.status(second.id)).toBe('queued');

    release();
    for (let i = 0; i < 100 && started.length < 2; i++) await turns(1);
    expect(started.map((one) => one.runId)).toEqual([first.id, second.id]);
    expect(started[1].claimed).toMatchObject({ id: second.id, status: 'running' });
  });

  it('takes, in the accept, the job first in fair order: one waiting that this process had not seen comes before the new run', async () => {
    // Queued by another process sharing the file, and not yet looked for here.
    const earlier = caller('wf_2');
    await runs.create(earlier, new Date(0));
    const now = new Date();
    await jobs.insert(
      { name: RUN_JOB, id: earlier.id, data: JSON.stringify({ runId: earlier.id }), maxAttempts: 3, backoffMs: 0, runAt: now },
      now,
    );
    const run = caller();

    await admission.accept(run, 'caller', {});

    expect(started.map((one) => one.runId)).toEqual([earlier.id]);
    expect(await jobs.get({ name: RUN_JOB, id: run.id })).toMatchObject({ state: 'waiting' });
  });
});

describe('the hold before a refusal', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  const queuedFor = (ms: number) => new Date(now - ms);

  it('lasts half the age of the oldest queued run, so a caller looping on refusals comes back before the backlog is worked through', () => {
    expect(refusalHoldMs(1000, queuedFor(400), now)).toBe(200);
    expect(refusalHoldMs(1000, queuedFor(1200), now)).toBe(600);
  });

  it('never exceeds RUNS_REFUSAL_DELAY_MS, and never falls under its floor', () => {
    expect(refusalHoldMs(1000, queuedFor(30_000), now)).toBe(1000);
    expect(refusalHoldMs(1000, queuedFor(20), now)).toBe(REFUSAL_HOLD_MIN_MS);
    expect(refusalHoldMs(1000, null, now)).toBe(REFUSAL_HOLD_MIN_MS);
    expect(refusalHoldMs(50, queuedFor(400), now)).toBe(50);
  });

  it('holds nothing when RUNS_REFUSAL_DELAY_MS is 0', () => {
    expect(refusalHoldMs(0, queuedFor(400), now)).toBe(0);
  });
});
