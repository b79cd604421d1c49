import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { RecordingQueue } from '../../test/utils/recording-queue';
import { newId } from '../common/ids';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteRunStore } from '../storage/embedded/sqlite-run-store.adapter';
import { SqliteWorkflowStore } from '../storage/embedded/sqlite-workflow-store.adapter';
import type { AppConfig } from '../config/app-config';
import { Metrics } from '../metrics/metrics.service';
import { RunAdmission } from './run-admission.service';
import { Clock, WorkflowScheduler } from './workflow-scheduler.service';

/** A clock the test moves by hand. */
class FakeClock extends Clock {
  constructor(private at: Date) {
    super();
  }
  now(): Date {
    return new Date(this.at);
  }
  set(at: string): Date {
    this.at = new Date(at);
    return this.now();
  }
}

describe('WorkflowScheduler on a fake clock', () => {
  let dir: string;
  let db: SqliteDb;
  let workflows: SqliteWorkflowStore;
  let runs: SqliteRunStore;
  let queue: RecordingQueue;
  let clock: FakeClock;
  const silent = pino({ level: 'silent' });
  const limits = {
    RUNS_MAX_QUEUED: 5000,
    RUNS_MAX_QUEUED_PER_WORKFLOW: 1000,
    RUNS_ENQUEUE_TIMEOUT_MS: 1500,
    RUNS_REFUSAL_DELAY_MS: 0,
  } as AppConfig;

  /** One process: its own scheduler and run admission over the shared store and queue. */
  const process = () => {
    const admission = new RunAdmission(runs, workflows, queue, silent, limits, new Metrics());
    return new WorkflowScheduler(workflows, admission, clock, { refreshMs: 0, maxSleepMs: 1000, catchUpMs: 60_000 }, silent);
  };

  /** A workflow with a published version whose trigger fires every 5 minutes, Paris time. */
  async function scheduled(cron = '*/5 * * * *', timezone = 'Europe/Paris') {
    const now = clock.now();
    const id = newId('wfl');
    const draft = {
      nodes: [{ id: 'tick', type: 'schedule-trigger', version: 1, parameters: { cron, timezone } }],
      edges: [],
      variables: [],
    };
    await workflows.create({
      id,
      name: 'cron',
      ownerId: 'usr_owner',
      draftSavedBy: 'usr_owner',
      draft,
      activeVersionId: null,
      activeVersion: null,
      activatedBy: null,
      latestVersion: 0,
      settings: {},
      schedule: null,
      tool: null,
      createdAt: now,
      updatedAt: now,
    });
    const versionId = newId('wfv');
    await workflows.publish(
      id,
      { id: versionId, definition: draft, createdBy: 'usr_owner', createdAt: now },
      { schedule: { cron, timezone, versionId }, tool: null },
    );
    return { id, versionId, draft };
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-scheduler-'));
    db = openSqliteDatabase(dir);
    workflows = new SqliteWorkflowStore(db);
    runs = new SqliteRunStore(db);
    queue = new RecordingQueue();
    clock = new FakeClock(new Date('2026-11-24T10:01:00Z'));
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts one production run per tick, as the owner, with the tick in its input', async () => {
    const { id } = await scheduled();
    const scheduler = process();
    expect(await scheduler.tick()).toBe(0);
    expect(await scheduler.tick(clock.set('2026-11-24T10:04:59Z'))).toBe(0);
    expect(await scheduler.tick(clock.set('2026-11-24T10:05:00Z'))).toBe(1);
    expect(await scheduler.tick(clock.set('2026-11-24T10:07:00Z'))).toBe(0);
    expect(await scheduler.tick(clock.set('2026-11-24T10:10:20Z'))).toBe(1);
    expect(await scheduler.tick(clock.set('2026-11-24T10:15:10Z'))).toBe(1);
    const started = await runs.list({ workflowId: id }, { offset: 0, limit: 10 });
    expect(started.items.map((r) => (r.input as { scheduledAt: string }).scheduledAt).sort()).toEqual([
      '2026-11-24T10:05:00.000Z',
      '2026-11-24T10:10:00.000Z',
      '2026-11-24T10:15:00.000Z',
    ]);
    expect(started.items[0]).toMatchObject({ runType: 'production', actingUserId: 'usr_owner', status: 'queued' });
    expect(queue.enqueued).toHaveLength(3);
  });

  it('fires a tick once however many processes see it', async () => {
    const { id } = await scheduled();
    const processes = [process(), process(), process()];
    await Promise.all(processes.map((p) => p.tick()));
    const created = await Promise.all(processes.map((p) => p.tick(clock.set('2026-11-24T10:05:01Z'))));
    expect(created.reduce((a, b) => a + b, 0)).toBe(1);
    expect((await runs.list({ workflowId: id }, { offset: 0, limit: 10 })).total).toBe(1);
  });

  it('reads the cron expression in its time zone', async () => {
    const { id } = await scheduled('0 9 * * *', 'Europe/Paris');
    const scheduler = process();
    await scheduler.tick(clock.set('2026-11-24T07:59:00Z'));
    expect(await scheduler.tick(clock.set('2026-11-24T08:00:30Z'))).toBe(1);
    const [run] = (await runs.list({ workflowId: id }, { offset: 0, limit: 1 })).items;
    expect((run.input as { scheduledAt: string }).scheduledAt).toBe('2026-11-24T08:00:00.000Z');
  });

  it('does not make up ticks missed long ago', async () => {
    await scheduled();
    const scheduler = process();
    await scheduler.tick();
    // Stalled for hours: only the ticks of the last minute are made up for.
    expect(await scheduler.tick(clock.set('2026-11-24T14:00:30Z'))).toBe(1);
  });

  it('stops when the schedule is dropped and forgets it: seen again, it starts from then', async () => {
    const { id, versionId, draft } = await scheduled();
    const scheduler = process();
    await scheduler.tick();
    // Version 2 has no schedule; then version 1 is active again, its schedule with it.
    await workflows.publish(
      id,
      { id: newId('wfv'), definition: draft, createdBy: 'usr_owner', createdAt: clock.now() },
      { schedule: null, tool: null },
    );
    expect(await scheduler.tick(clock.set('2026-11-24T10:30:00Z'))).toBe(0);
    await workflows.activate(
      id,
      1,
      clock.set('2026-11-24T14:00:30Z'),
      { schedule: { cron: '*/5 * * * *', timezone: 'UTC', versionId }, tool: null },
      'usr_owner',
    );
    expect(await scheduler.tick()).toBe(0);
    expect(await scheduler.tick(clock.set('2026-11-24T14:05:10Z'))).toBe(1);
  });

  it("skips a tick beyond the queued-run limit and counts it, while an error workflow's run is always admitted", async () => {
    const { id } = await scheduled();
    const metrics = new Metrics();
    const admission = new RunAdmission(
      runs,
      workflows,
      queue,
      silent,
      { ...limits, RUNS_MAX_QUEUED_PER_WORKFLOW: 2 } as AppConfig,
      metrics,
    );
    const scheduler = new WorkflowScheduler(workflows, admission, clock, { refreshMs: 0, maxSleepMs: 1000, catchUpMs: 60_000 }, silent);
    expect(await scheduler.tick()).toBe(0);
    // Nothing works the queue here: two ticks fill it, the third is skipped, not kept for later.
    expect(await scheduler.tick(clock.set('2026-11-24T10:05:00Z'))).toBe(1);
    expect(await scheduler.tick(clock.set('2026-11-24T10:10:00Z'))).toBe(1);
    expect(await scheduler.tick(clock.set('2026-11-24T10:15:00Z'))).toBe(0);
    expect(await metrics.render()).toContain('workflow_runs_refused_total{reason="workflow-queue-limit",trigger="schedule"} 1');
    expect((await runs.list({ workflowId: id }, { offset: 0, limit: 10 })).total).toBe(2);

    const workflow = (await workflows.get(id))!;
    const reported = await admission.startForService(workflow, 'error-workflow', { failed: 'run_x' }, 'error-of:run_x');
    expect(reported).toMatchObject({ created: true, run: { status: 'queued', trigger: 'error-workflow' } });
    expect((await runs.list({ workflowId: id }, { offset: 0, limit: 10 })).total).toBe(3);
  });
});
