import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { RecordingQueue } from '../../test/utils/recording-queue';
import { Metrics } from '../metrics/metrics.service';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';
import { newQueuedRun, Run } from '../domain/run.model';
import { UnwatchedStoreCommits } from '../domain/store-commits.port';
import { RunEvents } from './run-events';
import { RunsReconciler } from './runs-reconciler.service';
import { RUN_JOB } from '../domain/job-names';

describe('RunsReconciler', () => {
  let dir: string;
  let db: SqliteDb;
  let runs: SqliteRunStore;
  let queue: RecordingQueue;
  let reconciler: RunsReconciler;
  let events: RunEvents;
  /** Run ids whose end the reconciler told its waiters of. */
  let told: string[];
  const longAgo = new Date(Date.now() - 10 * 60_000);

  const queued = async (overrides: Partial<Run> = {}): Promise<Run> => {
    const run: Run = {
      ...newQueuedRun(
        {
          workflowId: 'wfl_r',
          runType: 'test',
          versionId: null,
          version: null,
          definition: { nodes: [], edges: [], variables: [] },
          input: null,
          trigger: 'webhook',
          startedBy: 'usr_1',
          actingUserId: 'usr_1',
          idempotencyKey: null,
        },
        longAgo,
      ),
      ...overrides,
    };
    await runs.create(run, new Date(0));
    return run;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-reconciler-'));
    db = openSqliteDatabase(dir);
    runs = new SqliteRunStore(db);
    queue = new RecordingQueue();
    events = new RunEvents(new UnwatchedStoreCommits());
    told = [];
    const finished = events.finished.bind(events);
    events.finished = (runId) => (told.push(runId), finished(runId));
    reconciler = new RunsReconciler(
      runs,
      queue,
      pino({ level: 'silent' }),
      { intervalMs: 60_000, queuedGraceMs: 30_000, maxClaims: 3, batchSize: 100 },
      new Metrics(),
      events,
    );
  });

  afterEach(() => {
    events.onModuleDestroy();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('enqueues a queued run whose job is missing, under its own job id', async () => {
    const lost = await queued();
    await reconciler.reconcile();
    expect(queue.enqueued).toEqual([{ name: RUN_JOB, data: { runId: lost.id, workflowId: 'wfl_r' }, jobId: lost.id }]);
    await reconciler.reconcile();
    expect(queue.enqueued).toHaveLength(1);
  });

  it('leaves young queued runs and runs whose job still waits', async () => {
    await queued({ createdAt: new Date() });
    const waiting = await queued();
    queue.states.set(waiting.jobId, 'waiting');
    await reconciler.reconcile();
    expect(queue.enqueued).toEqual([]);
  });

  it.each(['failed', 'completed', 'stuck'] as const)('gives a queued run whose job is %s a new job id', async (state) => {
    const stuck = await queued();
    queue.states.set(stuck.jobId, state);
    await reconciler.reconcile();
    const jobId = queue.enqueued[0].jobId!;
    expect(jobId).toMatch(new RegExp(`^${stuck.id}\\.q`));
    expect((await runs.get(stuck.id))?.jobId).toBe(jobId);
  });

  it('pages through the queued runs over its passes, so runs whose jobs are fine do not hide a lost one behind them', async () => {
    reconciler = new RunsReconciler(
      runs,
      queue,
      pino({ level: 'silent' }),
      { intervalMs: 60_000, queuedGraceMs: 30_000, maxClaims: 3, batchSize: 2 },
      new Metrics(),
      events,
    );
    const parked = [];
    for (let i = 0; i < 4; i++) {
      const run = await queued({ createdAt: new Date(longAgo.getTime() + i) });
      queue.states.set(run.jobId, 'waiting');
      parked.push(run);
    }
    const lost = await queued({ createdAt: new Date(longAgo.getTime() + 10) });
    await reconciler.reconcile();
    await reconciler.reconcile();
    expect(queue.enqueued).toEqual([]);
    await reconciler.reconcile();
    expect(queue.enqueued.map((e) => e.jobId)).toEqual([lost.id]);
    // Back to the oldest after the last page.
    queue.states.delete(parked[0].jobId);
    await reconciler.reconcile();
    expect(queue.enqueued.map((e) => e.jobId)).toEqual([lost.id, parked[0].id]);
  });

  it('puts a run whose worker died back in the queue, and fails it after too many lost workers', async () => {
    const orphan = await queued();
    await runs.claim(orphan.id, 'dead-worker', new Date(Date.now() - 1000), longAgo);
    await reconciler.reconcile();
    expect(await runs.get(orphan.id)).toMatchObject({ status: 'queued', jobId: `${orphan.id}.r1`, leaseOwner: null });
    expect(queue.enqueued.map((e) => e.jobId)).toEqual([`${orphan.id}.r1`]);

    await runs.claim(orphan.id, 'second', new Date(Date.now() - 1000), new Date());
    await reconciler.reconcile();
    expect(await runs.get(orphan.id)).toMatchObject({ status: 'queued', leaseLosses: 2 });
    expect(told).toEqual([]);
    // The third lost worker: given up. Its waiters hear of the end at once (this wait would
    // otherwise last ten minutes).
    await runs.claim(orphan.id, 'third', new Date(Date.now() - 1000), new Date());
    const waiter = events.nextFinish(orphan.id, 600_000);
    await reconciler.reconcile();
    expect(await runs.get(orphan.id)).toMatchObject({ status: 'failed', claims: 3, error: { code: 'UNAVAILABLE' } });
    expect(told).toEqual([orphan.id]);
    await waiter;
  });

  it('counts lost workers, not claims: a run claimed again after waits or hand-backs is queued again on its first loss', async () => {
    const resumed = await queued();
    // Two starts that ended well (a wait, a hand-back at shutdown) before a third whose worker dies.
    for (const worker of ['first', 'second']) {
      await runs.claim(resumed.id, worker, new Date(Date.now() + 30_000), new Date());
      expect(await runs.release(resumed.id, worker)).toBe(true);
    }
    await runs.claim(resumed.id, 'dies', new Date(Date.now() - 1000), new Date());
    await reconciler.reconcile();
    expect(await runs.get(resumed.id)).toMatchObject({ status: 'queued', claims: 3, leaseLosses: 1 });
  });

  it('ends a sub-workflow run its lost worker left, running or not yet started, instead of queueing it on its own', async () => {
    const child = { parentRunId: 'run_parent', parentNodeId: 'sub', depth: 1 };
    const started = await queued(child);
    await runs.claim(started.id, 'dead-worker', new Date(Date.now() - 1000), longAgo);
    const unstarted = await queued(child);
    await reconciler.reconcile();
    for (const run of [started, unstarted]) {
      expect(await runs.get(run.id)).toMatchObject({ status: 'failed', error: { code: 'INTERRUPTED' } });
    }
    expect(told.sort()).toEqual([started.id, unstarted.id].sort());
    expect(queue.enqueued).toEqual([]);
  });

  it('leaves a running run whose lease is alive', async () => {
    const busy = await queued();
    await runs.claim(busy.id, 'alive', new Date(Date.now() + 30_000), new Date());
    await reconciler.reconcile();
    expect((await runs.get(busy.id))?.status).toBe('running');
    expect(queue.enqueued).toEqual([]);
  });
});
