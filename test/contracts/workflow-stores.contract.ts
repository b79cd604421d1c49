import { succeededStep } from '../utils/steps';
import { newId } from '../../src/common/ids';
import type { WorkflowDefinition } from '../../src/domain/workflow-definition.model';
import { SqliteMembershipStore } from '../../src/storage/embedded/sqlite-membership-store.adapter';
import { SqliteRunStore } from '../../src/storage/embedded/sqlite-run-store.adapter';
import { SqliteWorkflowStore } from '../../src/storage/embedded/sqlite-workflow-store.adapter';
import { MongoMembershipStore } from '../../src/storage/mongo/mongo-membership-store.adapter';
import { MongoRunStore } from '../../src/storage/mongo/mongo-run-store.adapter';
import { MongoWorkflowStore } from '../../src/storage/mongo/mongo-workflow-store.adapter';
import { MembershipStore } from '../../src/domain/membership-store.port';
import { AT_CONCURRENCY_LIMIT, RunStore } from '../../src/domain/run-store.port';
import { newQueuedRun, Run } from '../../src/domain/run.model';
import { Workflow } from '../../src/domain/workflow.model';
import { WorkflowStore } from '../../src/domain/workflow-store.port';
import { pick, storeBackends } from '../utils/store-backends';

const definition = (label: string): WorkflowDefinition => ({
  nodes: [{ id: 'trigger', type: 'webhook-trigger', version: 1, parameters: { label, empty: {} } }],
  edges: [],
  variables: [{ name: 'token', type: 'secret', value: 'v1.cipher' }],
});

const workflow = (ownerId: string, name = 'wf'): Workflow => {
  const now = new Date();
  return {
    id: newId('wfl'),
    name,
    ownerId,
    draft: definition('draft'),
    activeVersionId: null,
    activeVersion: null,
    activatedBy: null,
    draftSavedBy: ownerId,
    latestVersion: 0,
    settings: { maxConcurrentRuns: 2 },
    schedule: null,
    tool: null,
    createdAt: now,
    updatedAt: now,
  };
};

const queuedRun = (workflowId: string, overrides: Partial<Run> = {}): Run => ({
  ...newQueuedRun({
    workflowId,
    runType: 'test',
    versionId: null,
    version: null,
    definition: definition('snapshot'),
    input: { q: 'x', list: [1, null] },
    trigger: 'webhook',
    startedBy: 'usr_a',
    actingUserId: 'usr_a',
    idempotencyKey: null,
  }),
  ...overrides,
});

const step = succeededStep;

const inFuture = (ms: number) => new Date(Date.now() + ms);
const NO_TRIGGERS = { schedule: null, tool: null };

describe.each(storeBackends)('workflow and run stores on $name', (backend) => {
  let close: () => Promise<void>;
  let workflows: WorkflowStore;
  let runs: RunStore;
  let memberships: MembershipStore;

  beforeAll(async () => {
    const handles = await backend.open();
    close = handles.close;
    workflows = pick(
      handles,
      (db) => new SqliteWorkflowStore(db),
      (c) => new MongoWorkflowStore(c),
    );
    runs = pick(
      handles,
      (db) => new SqliteRunStore(db),
      (c) => new MongoRunStore(c),
    );
    memberships = pick(
      handles,
      (db) => new SqliteMembershipStore(db),
      (c) => new MongoMembershipStore(c),
    );
    await handles.mongo?.syncIndexes();
  });

  afterAll(() => close());

  /** Publishes the workflow's draft as it stands, with no schedule or tool. */
  const publishDraft = async (workflowId: string, createdBy = 'usr_owner') => {
    const draft = (await workflows.get(workflowId))!.draft;
    return workflows.publish(workflowId, { id: newId('wfv'), definition: draft, createdBy, createdAt: new Date() }, NO_TRIGGERS);
  };

  describe('WorkflowStore', () => {
    it('creates a workflow owned by its creator and lists it for them only', async () => {
      const w = workflow('usr_owner');
      await workflows.create(w);
      expect(await memberships.getRole('workflow', w.id, 'usr_owner')).toBe('owner');
      expect(await workflows.get(w.id)).toEqual(w);
      const visible = await workflows.listVisible('usr_owner', { offset: 0, limit: 10 });
      expect(visible.items.map((v) => [v.id, v.role])).toContainEqual([w.id, 'owner']);
      expect((await workflows.listVisible('usr_nobody', { offset: 0, limit: 10 })).total).toBe(0);
    });

    it('numbers published versions, keeps them immutable and activates older ones', async () => {
      const w = workflow('usr_owner');
      await workflows.create(w);
      const v1 = await publishDraft(w.id);
      await workflows.updateDraft(w.id, 'renamed', definition('second'), new Date(), 'usr_editor');
      expect((await workflows.get(w.id))?.draftSavedBy).toBe('usr_editor');
      const v2 = await publishDraft(w.id, 'usr_editor');
      expect([v1?.version, v2?.version]).toEqual([1, 2]);
      expect(v2).toMatchObject({ workflowId: w.id, createdBy: 'usr_editor', definition: definition('second') });
      expect((await workflows.getVersion(w.id, 1))?.definition).toEqual(definition('draft'));
      expect((await workflows.getVersionById(v2!.id))?.definition).toEqual(definition('second'));
      expect(await workflows.get(w.id)).toMatchObject({
        name: 'renamed',
        activeVersion: 2,
        activeVersionId: v2!.id,
        latestVersion: 2,
        activatedBy: 'usr_editor',
      });
      expect((await workflows.listVersions(w.id)).map((v) => v.version)).toEqual([2, 1]);

      expect(await workflows.activate(w.id, 1, new Date(), NO_TRIGGERS, 'usr_other_editor')).toBe(true);
      expect(await workflows.get(w.id)).toMatchObject({
        activeVersion: 1,
        activeVersionId: v1!.id,
        latestVersion: 2,
        activatedBy: 'usr_other_editor',
      });
      expect(await workflows.activate(w.id, 7, new Date(), NO_TRIGGERS, 'usr_owner')).toBe(false);
      expect((await publishDraft(w.id))?.version).toBe(3);
    });

    it('gives concurrent publishes distinct numbers, the active one with its own triggers', async () => {
      const w = workflow('usr_owner');
      await workflows.create(w);
      const ids = [1, 2, 3, 4].map(() => newId('wfv'));
      const tool = (versionId: string) => ({ inputSchema: { type: 'object' }, versionId });
      const versions = await Promise.all(
        ids.map((id) =>
          workflows.publish(
            w.id,
            { id, definition: definition('draft'), createdBy: 'usr_owner', createdAt: new Date() },
            { schedule: null, tool: tool(id) },
          ),
        ),
      );
      expect(versions.map((v) => v!.version).sort()).toEqual([1, 2, 3, 4]);
      const stored = await workflows.get(w.id);
      expect(stored?.activeVersion).toBe(4);
      expect(stored?.tool).toEqual(tool(stored!.activeVersionId!));
    });

    it('keeps settings unless replaced, and sets the schedule and tool of the version it publishes or activates', async () => {
      const w = workflow('usr_owner');
      await workflows.create(w);
      await workflows.updateDraft(w.id, w.name, definition('x'), new Date(), 'usr_owner');
      expect((await workflows.get(w.id))?.settings).toEqual({ maxConcurrentRuns: 2 });
      await workflows.updateDraft(w.id, w.name, definition('x'), new Date(), 'usr_owner', { rateLimit: { requests: 5, perSeconds: 60 } });
      expect((await workflows.get(w.id))?.settings).toEqual({ rateLimit: { requests: 5, perSeconds: 60 } });

      const v1 = newId('wfv');
      const schedule = { cron: '*/5 * * * *', timezone: 'Europe/Paris', versionId: v1 };
      await workflows.publish(
        w.id,
        { id: v1, definition: definition('x'), createdBy: 'usr_owner', createdAt: new Date() },
        { schedule, tool: null },
      );
      expect(await workflows.get(w.id)).toMatchObject({ activeVersionId: v1, schedule, tool: null });
      expect(await workflows.listScheduled()).toContainEqual({ workflowId: w.id, schedule });

      const v2 = newId('wfv');
      const tool = {
        description: 'Looks things up',
        inputSchema: { type: 'object', properties: { $q: { type: 'string' } } },
        versionId: v2,
      };
      await workflows.publish(
        w.id,
        { id: v2, definition: definition('y'), createdBy: 'usr_owner', createdAt: new Date() },
        { schedule: null, tool },
      );
      expect(await workflows.get(w.id)).toMatchObject({ activeVersionId: v2, schedule: null, tool });
      expect((await workflows.listScheduled()).map((s) => s.workflowId)).not.toContain(w.id);
      expect(await workflows.listTools()).toContainEqual({ workflowId: w.id, name: w.name, tool });

      expect(await workflows.activate(w.id, 1, new Date(), { schedule, tool: null }, 'usr_owner')).toBe(true);
      expect(await workflows.get(w.id)).toMatchObject({ activeVersionId: v1, schedule, tool: null });
      expect((await workflows.listTools()).map((t) => t.workflowId)).not.toContain(w.id);
    });

    it("reads what starting a published run needs, with the caller's role as it stands now", async () => {
      const w = workflow('usr_owner', 'startable');
      await workflows.create(w);
      expect(await workflows.startable(w.id, 'usr_owner')).toEqual({
        workflow: { id: w.id, name: 'startable', activeVersionId: null, activeVersion: null, settings: { maxConcurrentRuns: 2 } },
        role: 'owner',
      });
      const v1 = await publishDraft(w.id);
      await memberships.setRole({
        resourceType: 'workflow',
        resourceId: w.id,
        userId: 'usr_member',
        role: 'editor',
        createdAt: new Date(),
      });
      expect(await workflows.startable(w.id, 'usr_member')).toMatchObject({
        workflow: { activeVersionId: v1!.id, activeVersion: 1 },
        role: 'editor',
      });
      // A role lowered or removed, a version published: the next read says so.
      await memberships.setRole({
        resourceType: 'workflow',
        resourceId: w.id,
        userId: 'usr_member',
        role: 'viewer',
        createdAt: new Date(),
      });
      expect((await workflows.startable(w.id, 'usr_member'))?.role).toBe('viewer');
      await memberships.remove('workflow', w.id, 'usr_member');
      const v2 = await publishDraft(w.id);
      expect(await workflows.startable(w.id, 'usr_member')).toMatchObject({
        workflow: { activeVersionId: v2!.id, activeVersion: 2 },
        role: null,
      });
      expect(await workflows.startable(w.id, 'usr_stranger')).toMatchObject({ role: null });
      expect(await workflows.startable('wfl_none', 'usr_owner')).toBeNull();
      await workflows.delete(w.id);
      expect(await workflows.startable(w.id, 'usr_owner')).toBeNull();
    });

    it('reads the settings alone, as they were last saved', async () => {
      const w = workflow('usr_owner', 'settings');
      await workflows.create(w);
      expect(await workflows.settings(w.id)).toEqual({ maxConcurrentRuns: 2 });
      await workflows.updateDraft(w.id, w.name, w.draft, new Date(), 'usr_owner', {
        maxConcurrentRuns: 5,
        stepData: { succeeded: 'none', failed: 'all' },
      });
      expect(await workflows.settings(w.id)).toEqual({ maxConcurrentRuns: 5, stepData: { succeeded: 'none', failed: 'all' } });
      expect(await workflows.settings('wfl_none')).toBeUndefined();
      await workflows.delete(w.id);
      expect(await workflows.settings(w.id)).toBeUndefined();
    });

    it('names the workflows among some ids that exist', async () => {
      const a = workflow('usr_owner', 'alpha');
      const b = workflow('usr_owner', 'beta');
      await workflows.create(a);
      await workflows.create(b);
      const names = await workflows.names([a.id, b.id, a.id, 'wfl_missing']);
      expect([...names].sort()).toEqual(
        [
          [a.id, 'alpha'],
          [b.id, 'beta'],
        ].sort(),
      );
      expect((await workflows.names([])).size).toBe(0);
    });

    it('finds the workflows whose draft or active version holds a text, saying which', async () => {
      const needle = JSON.stringify(newId('crd'));
      const draftOnly = workflow('usr_owner', 'draft only');
      const activeOnly = workflow('usr_owner', 'active only');
      await workflows.create({
        ...draftOnly,
        draft: { ...definition('x'), nodes: [{ id: 'n', type: 'http-request', parameters: { credential: JSON.parse(needle) } }] },
      });
      await workflows.create({
        ...activeOnly,
        draft: { ...definition('y'), nodes: [{ id: 'n', type: 'http-request', parameters: { credential: JSON.parse(needle) } }] },
      });
      await publishDraft(activeOnly.id);
      await workflows.updateDraft(activeOnly.id, activeOnly.name, definition('z'), new Date(), 'usr_owner');
      const found = await workflows.referencing(needle);
      expect(found.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        { workflowId: activeOnly.id, name: 'active only', inDraft: false, inActiveVersion: true },
        { workflowId: draftOnly.id, name: 'draft only', inDraft: true, inActiveVersion: false },
      ]);
      expect(await workflows.referencing(JSON.stringify('crd_nowhere'))).toEqual([]);
    });

    it('deletes a workflow with its versions and members', async () => {
      const w = workflow('usr_owner');
      await workflows.create(w);
      const v = await publishDraft(w.id);
      expect(await workflows.delete(w.id)).toBe(true);
      expect(await workflows.get(w.id)).toBeNull();
      expect(await workflows.getVersionById(v!.id)).toBeNull();
      expect(await memberships.getRole('workflow', w.id, 'usr_owner')).toBeNull();
      expect(
        await workflows.publish(
          w.id,
          { id: newId('wfv'), definition: definition('gone'), createdBy: 'usr_owner', createdAt: new Date() },
          NO_TRIGGERS,
        ),
      ).toBeNull();
    });
  });

  describe('RunStore', () => {
    it('stores a run with its input and test definition', async () => {
      const run = queuedRun('wfl_store');
      expect(await runs.create(run, new Date(0))).toEqual({ created: true, run });
      expect(await runs.get(run.id)).toEqual(run);
    });

    it('keeps an undefined input apart from a null one', async () => {
      const none = queuedRun('wfl_store', { input: undefined });
      const nil = queuedRun('wfl_store', { input: null });
      await runs.create(none, new Date(0));
      await runs.create(nil, new Date(0));
      expect((await runs.get(none.id))?.input).toBeUndefined();
      expect((await runs.get(nil.id))?.input).toBeNull();
    });

    it('returns the earlier run for an idempotency key within the window, and forgets older uses', async () => {
      const first = queuedRun('wfl_idem', { idempotencyKey: 'k1' });
      await runs.create(first, new Date(0));
      const again = await runs.create(queuedRun('wfl_idem', { idempotencyKey: 'k1' }), new Date(Date.now() - 60_000));
      expect(again).toMatchObject({ created: false, run: { id: first.id } });
      const otherWorkflow = await runs.create(queuedRun('wfl_other', { idempotencyKey: 'k1' }), new Date(0));
      expect(otherWorkflow.created).toBe(true);
      const later = queuedRun('wfl_idem', { idempotencyKey: 'k1' });
      expect(await runs.create(later, inFuture(60_000))).toMatchObject({ created: true, run: { id: later.id } });
      expect((await runs.get(first.id))?.idempotencyKey).toBeNull();
      // Looked up without inserting: the current use within the window, nothing before it or elsewhere.
      expect((await runs.byIdempotencyKey('wfl_idem', 'k1', new Date(Date.now() - 60_000)))?.id).toBe(later.id);
      expect(await runs.byIdempotencyKey('wfl_idem', 'k1', inFuture(60_000))).toBeNull();
      expect(await runs.byIdempotencyKey('wfl_idem', 'k2', new Date(0))).toBeNull();
    });

    it('lets exactly one worker claim a queued run, and records steps only for the lease holder', async () => {
      const run = queuedRun('wfl_claim');
      await runs.create(run, new Date(0));
      const now = new Date();
      const claims = await Promise.all(['w1', 'w2', 'w3'].map((w) => runs.claim(run.id, w, inFuture(30_000), now)));
      const winners = claims.filter((c): c is Run => c !== null && c !== AT_CONCURRENCY_LIMIT);
      expect(winners).toHaveLength(1);
      const owner = winners[0].leaseOwner!;
      expect(winners[0]).toMatchObject({ status: 'running', claims: 1 });
      expect(await runs.recordSteps(run.id, 'intruder', [step('a', 0)])).toEqual({ held: false, cancelRequested: false });
      expect(await runs.recordSteps(run.id, owner, [step('b', 1), step('a', 0)])).toEqual({ held: true, cancelRequested: false });
      expect(await runs.recordSteps(run.id, owner, [{ ...step('a', 0, { again: true }), attempts: 2 }])).toMatchObject({ held: true });
      const stored = await runs.get(run.id);
      expect(stored?.steps.map((s) => [s.nodeId, s.attempts, s.output])).toEqual([
        ['a', 2, { again: true }],
        ['b', 1, { ok: 'b' }],
      ]);
    });

    it('answers a recording with the cancel request, and records nothing once the lease is gone', async () => {
      const run = queuedRun('wfl_record_cancel');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      await runs.requestCancel(run.id, new Date());
      expect(await runs.recordSteps(run.id, 'w1', [step('a', 0), step('b', 1)])).toEqual({ held: true, cancelRequested: true });
      expect(await runs.recordSteps(run.id, 'w1', [])).toEqual({ held: true, cancelRequested: true });
      expect(await runs.recordSteps(run.id, 'intruder', [step('c', 2)])).toEqual({ held: false, cancelRequested: true });
      expect(await runs.complete(run.id, 'w1', [], { status: 'canceled', error: null, finishedAt: new Date() })).toBe(true);
      expect(await runs.recordSteps(run.id, 'w1', [step('d', 3)])).toEqual({ held: false, cancelRequested: true });
      expect(await runs.recordSteps('run_missing', 'w1', [step('a', 0)])).toEqual({ held: false, cancelRequested: false });
      expect((await runs.get(run.id))?.steps.map((s) => s.nodeId)).toEqual(['a', 'b']);
    });

    it("keeps a step's input apart from its output, a null input apart from none", async () => {
      const run = queuedRun('wfl_inputs');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      await runs.recordSteps(run.id, 'w1', [
        { ...step('a', 0), input: { 'dotted.key': [1, { $odd: true }] } },
        { ...step('b', 1), input: null },
        step('c', 2),
      ]);
      const stored = await runs.get(run.id);
      expect(stored?.steps.map((s) => [s.nodeId, s.input, s.output])).toEqual([
        ['a', { 'dotted.key': [1, { $odd: true }] }, { ok: 'a' }],
        ['b', null, { ok: 'b' }],
        ['c', undefined, { ok: 'c' }],
      ]);
      expect(stored?.steps[2]).not.toHaveProperty('input');
    });

    it('completes with the last steps while the lease is held, once', async () => {
      const run = queuedRun('wfl_complete');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      const completion = {
        status: 'failed' as const,
        error: { code: 'UPSTREAM_FAILED', message: 'no', nodeId: 'a' },
        finishedAt: new Date(),
      };
      expect(await runs.complete(run.id, 'w2', [step('a', 0)], completion)).toBe(false);
      expect(await runs.status(run.id)).toBe('running');
      expect(await runs.complete(run.id, 'w1', [step('a', 0)], completion)).toBe(true);
      expect(await runs.status(run.id)).toBe('failed');
      expect(await runs.status('run_missing')).toBeNull();
      expect(await runs.complete(run.id, 'w1', [], completion)).toBe(false);
      expect(await runs.get(run.id)).toMatchObject({
        status: 'failed',
        error: completion.error,
        leaseOwner: null,
        steps: [{ nodeId: 'a' }],
      });
      expect(await runs.claim(run.id, 'w3', inFuture(30_000), new Date())).toBeNull();
    });

    it('answers with the finished run, as get reads it, when a waiter asks for it (read)', async () => {
      const run = queuedRun('wfl_read');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      await runs.recordSteps(run.id, 'w1', [step('a', 0)]);
      const completion = { status: 'succeeded' as const, error: null, finishedAt: new Date(), output: { ok: 1 }, read: true };
      expect(await runs.complete(run.id, 'w2', [step('b', 1)], completion)).toBe(false);
      const finished = await runs.complete(run.id, 'w1', [step('b', 1)], completion);
      expect(finished).toMatchObject({ id: run.id, status: 'succeeded', output: { ok: 1 }, leaseOwner: null });
      expect(finished).toEqual(await runs.get(run.id));
      expect((finished as Run).steps.map((s) => s.nodeId)).toEqual(['a', 'b']);
    });

    it("keeps how a run started, and drops its steps' data when it finishes without keeping it", async () => {
      const run = queuedRun('wfl_stepdata', { trigger: 'schedule' });
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      await runs.recordSteps(run.id, 'w1', [{ ...step('a', 0), input: { secret: 'in' }, output: { secret: 'out' }, state: 'sealed' }]);
      const completion = {
        status: 'failed' as const,
        error: { code: 'UPSTREAM_FAILED', message: 'no', nodeId: 'b' },
        finishedAt: new Date(),
        keepStepData: false,
      };
      expect(
        await runs.complete(run.id, 'w1', [{ ...step('b', 1), status: 'failed', input: { x: 1 }, error: completion.error }], completion),
      ).toBe(true);
      const stored = await runs.get(run.id);
      expect(stored?.trigger).toBe('schedule');
      expect(stored?.steps.map((s) => [s.nodeId, s.status, s.input, s.output, s.state ?? null])).toEqual([
        ['a', 'succeeded', undefined, undefined, null],
        ['b', 'failed', undefined, undefined, null],
      ]);
      expect(stored?.steps[1].error).toEqual(completion.error);
      expect((await runs.list({ workflowId: 'wfl_stepdata' }, { offset: 0, limit: 1 })).items[0].trigger).toBe('schedule');
    });

    it('prunes finished runs by age and by count per workflow, with their steps, never unfinished ones', async () => {
      const w = workflow('usr_pruner');
      await workflows.create(w);
      const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
      const finish = async (run: Run, finishedAt: Date) => {
        await runs.create(run, new Date(0));
        await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
        await runs.complete(run.id, 'w1', [step('a', 0)], { status: 'succeeded', error: null, finishedAt });
      };
      const ancient = queuedRun(w.id, { createdAt: at(100) });
      await finish(ancient, at(99));
      const finished = [1, 2, 3, 4].map((i) => queuedRun(w.id, { createdAt: at(10 - i) }));
      for (const run of finished) await finish(run, at(5));
      const waitingOld = queuedRun(w.id, { createdAt: at(200) });
      await runs.create(waitingOld, new Date(0));

      // By age: only the run that finished before the cut goes, steps and all.
      expect(await runs.prune({ finishedBefore: at(50), limit: 100 })).toBe(1);
      expect(await runs.get(ancient.id)).toBeNull();
      // By count: the newest two finished runs stay; the queued run is not counted or touched.
      expect(await runs.prune({ keepPerWorkflow: 2, limit: 1 })).toBe(1);
      expect(await runs.prune({ keepPerWorkflow: 2, limit: 100 })).toBe(1);
      expect(await runs.prune({ keepPerWorkflow: 2, finishedBefore: at(50), limit: 100 })).toBe(0);
      const left = (await runs.list({ workflowId: w.id }, { offset: 0, limit: 10 })).items.map((r) => r.id);
      expect(left.sort()).toEqual([finished[2].id, finished[3].id, waitingOld.id].sort());
      expect(await runs.get(finished[0].id)).toBeNull();
    });

    it('renews a lease only for its holder, and reports cancel requests', async () => {
      const run = queuedRun('wfl_lease');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      expect(await runs.renewLease(run.id, 'w2', inFuture(30_000))).toEqual({ held: false, cancelRequested: false });
      expect(await runs.renewLease(run.id, 'w1', inFuture(30_000))).toEqual({ held: true, cancelRequested: false });
      expect((await runs.requestCancel(run.id, new Date()))?.status).toBe('running');
      expect(await runs.renewLease(run.id, 'w1', inFuture(30_000))).toEqual({ held: true, cancelRequested: true });
    });

    it('does not park a run whose cancel was asked for while it ran: its worker still holds it, to end it', async () => {
      const run = queuedRun('wfl_cancel_wait');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      await runs.requestCancel(run.id, new Date());
      expect(await runs.suspend(run.id, 'w1', [{ ...step('pause', 0), status: 'waiting' }], inFuture(60_000), `${run.id}.w1`)).toBe(false);
      expect(await runs.renewLease(run.id, 'w1', inFuture(30_000))).toEqual({ held: true, cancelRequested: true });
      expect((await runs.get(run.id))?.status).toBe('running');
    });

    it('cancels a queued run at once so no worker can claim it', async () => {
      const run = queuedRun('wfl_cancel');
      await runs.create(run, new Date(0));
      const canceled = await runs.requestCancel(run.id, new Date());
      expect(canceled).toMatchObject({ status: 'canceled', cancelRequested: true, error: { code: 'CANCELED' } });
      expect(canceled?.finishedAt).toBeInstanceOf(Date);
      expect(await runs.claim(run.id, 'w1', inFuture(30_000), new Date())).toBeNull();
      expect(await runs.requestCancel('run_missing', new Date())).toBeNull();
    });

    it('lets another worker take over an expired lease, handing it the steps to continue from', async () => {
      const run = queuedRun('wfl_expired');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'dead', new Date(Date.now() - 1), new Date(Date.now() - 30_000));
      await runs.recordSteps(run.id, 'dead', [{ ...step('a', 0), state: 'v1.sealed-outputs' }]);
      expect(await runs.claim(run.id, 'w2', inFuture(30_000), new Date(Date.now() - 60_000))).toBeNull();
      expect((await runs.listExpiredLeases(new Date(), 1000)).map((r) => r.id)).toContain(run.id);
      const taken = await runs.claim(run.id, 'w2', inFuture(30_000), new Date());
      expect(taken).toMatchObject({ leaseOwner: 'w2', claims: 2, steps: [{ nodeId: 'a', state: 'v1.sealed-outputs' }] });
    });

    it('parks a run as waiting under a new job and lets it be claimed once due, or canceled meanwhile', async () => {
      const run = queuedRun('wfl_wait');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      const resumeAt = inFuture(60_000);
      expect(await runs.suspend(run.id, 'w2', [], resumeAt, `${run.id}.w1`)).toBe(false);
      expect(
        await runs.suspend(run.id, 'w1', [{ ...step('pause', 0), status: 'waiting', state: 'v1.kept' }], resumeAt, `${run.id}.w1`),
      ).toBe(true);
      expect(await runs.get(run.id)).toMatchObject({
        status: 'waiting',
        resumeAt,
        jobId: `${run.id}.w1`,
        leaseOwner: null,
        steps: [{ nodeId: 'pause', status: 'waiting' }],
      });
      expect(await runs.claim(run.id, 'w2', inFuture(30_000), new Date())).toBeNull();
      expect((await runs.listDueWaiting(inFuture(120_000), 100)).map((r) => r.id)).toContain(run.id);
      expect((await runs.listDueWaiting(new Date(), 100)).map((r) => r.id)).not.toContain(run.id);
      const resumed = await runs.claim(run.id, 'w2', inFuture(30_000), inFuture(61_000));
      expect(resumed).toMatchObject({ status: 'running', resumeAt: null, steps: [{ nodeId: 'pause', state: 'v1.kept' }] });

      const other = queuedRun('wfl_wait');
      await runs.create(other, new Date(0));
      await runs.claim(other.id, 'w1', inFuture(30_000), new Date());
      await runs.suspend(other.id, 'w1', [], inFuture(60_000), `${other.id}.w1`);
      expect(await runs.requestCancel(other.id, new Date())).toMatchObject({ status: 'canceled', resumeAt: null });
    });

    it('lets one decision end a waiting step, makes the run due at once, and lists the steps still waiting by type and visibility', async () => {
      const w = workflow('usr_approver');
      await workflows.create(w);
      let created = Date.now() - 60_000;
      const waitAt = async (type: string) => {
        const run = queuedRun(w.id, { createdAt: new Date((created += 1000)) });
        await runs.create(run, new Date(0));
        await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
        await runs.suspend(
          run.id,
          'w1',
          [{ ...step('ask', 0), type, status: 'waiting', output: { summary: 'ok?' }, state: 'v1.pending' }],
          inFuture(3_600_000),
          `${run.id}.w1`,
        );
        return run;
      };
      const first = await waitAt('approval');
      const second = await waitAt('approval');
      await waitAt('wait');

      const listed = await runs.listWaitingSteps({ type: 'approval', visibleTo: 'usr_approver' }, 10);
      expect(listed.map((l) => l.run.id)).toEqual([first.id, second.id]);
      expect(listed[0].step).toMatchObject({ nodeId: 'ask', type: 'approval', status: 'waiting', output: { summary: 'ok?' } });
      expect(listed[0].step.state).toBeUndefined();
      expect(await runs.listWaitingSteps({ type: 'approval', visibleTo: 'usr_stranger' }, 10)).toEqual([]);
      expect(await runs.listWaitingSteps({ type: 'approval', visibleTo: 'usr_approver' }, 1)).toHaveLength(1);

      const now = new Date();
      const decided = { state: 'v1.approved', output: { decision: 'approved' } };
      expect(await runs.decideWaitingStep(first.id, 'ask', 'v1.other', decided, `${first.id}.a1`, now)).toBe(false);
      expect(await runs.decideWaitingStep(first.id, 'nobody', 'v1.pending', decided, `${first.id}.a1`, now)).toBe(false);
      expect(await runs.decideWaitingStep(first.id, 'ask', 'v1.pending', decided, `${first.id}.a1`, now)).toBe(true);
      // The same link again, or a second decider who read the step before: refused.
      expect(await runs.decideWaitingStep(first.id, 'ask', 'v1.pending', { ...decided, state: 'v1.rejected' }, `${first.id}.a2`, now)).toBe(
        false,
      );
      expect(await runs.get(first.id)).toMatchObject({
        status: 'waiting',
        resumeAt: now,
        jobId: `${first.id}.a1`,
        steps: [{ nodeId: 'ask', status: 'waiting', state: 'v1.approved', output: { decision: 'approved' } }],
      });
      expect(await runs.claim(first.id, 'w2', inFuture(30_000), new Date(now.getTime() + 1))).toMatchObject({
        status: 'running',
        steps: [{ state: 'v1.approved' }],
      });

      await runs.requestCancel(second.id, new Date());
      expect(await runs.decideWaitingStep(second.id, 'ask', 'v1.pending', decided, `${second.id}.a1`, now)).toBe(false);
      expect((await runs.listWaitingSteps({ type: 'approval' }, 10)).map((l) => l.run.id)).not.toContain(second.id);
    });

    it('claims under a concurrency limit only while a place is free, counting live leases only', async () => {
      const [a, b, c] = [queuedRun('wfl_limit'), queuedRun('wfl_limit'), queuedRun('wfl_limit')];
      for (const run of [a, b, c]) await runs.create(run, new Date(0));
      const claims = await Promise.all([a, b, c].map((run, i) => runs.claim(run.id, `w${i}`, inFuture(30_000), new Date(), 2)));
      expect(claims.filter((r) => r === AT_CONCURRENCY_LIMIT)).toHaveLength(1);
      const waiting = [a, b, c][claims.indexOf(AT_CONCURRENCY_LIMIT)];
      expect((await runs.get(waiting.id))?.status).toBe('queued');
      const finished = [a, b, c].find((run, i) => run !== waiting && claims[i] !== null)!;
      const owner = (claims[[a, b, c].indexOf(finished)] as Run).leaseOwner!;
      await runs.complete(finished.id, owner, [], { status: 'succeeded', error: null, finishedAt: new Date() });
      expect(await runs.claim(waiting.id, 'w9', inFuture(30_000), new Date(), 2)).toMatchObject({ status: 'running' });
      // A place held by a dead worker lapses with its lease.
      const late = queuedRun('wfl_limit');
      await runs.create(late, new Date(0));
      expect(await runs.claim(late.id, 'w10', inFuture(30_000), new Date(), 2)).toBe(AT_CONCURRENCY_LIMIT);
      expect(await runs.claim(late.id, 'w10', inFuture(60_000), inFuture(40_000), 2)).toMatchObject({ status: 'running' });
      expect(await runs.claim(queuedRun('wfl_missing').id, 'w1', inFuture(30_000), new Date(), 1)).toBeNull();
    });

    it('parks runs refused a place, and hands each freed place to a distinct parked run, oldest first', async () => {
      const at = (ms: number) => new Date(Date.UTC(2020, 0, 1) + ms);
      const [a, b, c, d] = [0, 1, 2, 3].map((i) => queuedRun('wfl_park', { createdAt: at(i) }));
      for (const run of [d, c, b, a]) await runs.create(run, new Date(0));
      const holder = queuedRun('wfl_park');
      await runs.create(holder, new Date(0));
      await runs.claim(holder.id, 'w0', inFuture(30_000), new Date(), 1);
      for (const run of [c, a, b, d]) {
        expect(await runs.claim(run.id, 'w1', inFuture(30_000), new Date(), 1)).toBe(AT_CONCURRENCY_LIMIT);
        expect(await runs.park(run.id, `${run.id}.p1`)).toBe(true);
      }
      expect((await runs.get(a.id))?.jobId).toBe(`${a.id}.p1`);
      expect(await runs.unparkOldest('wfl_other', '.u0')).toBeNull();

      const woken = await Promise.all([runs.unparkOldest('wfl_park', '.u1'), runs.unparkOldest('wfl_park', '.u2')]);
      expect(woken.map((r) => r?.id).sort()).toEqual([a.id, b.id].sort());
      for (const run of woken) {
        expect(run?.jobId).toMatch(new RegExp(`^${run!.id}\\.u[12]$`));
        expect((await runs.get(run!.id))?.jobId).toBe(run!.jobId);
      }
      // A parked run that was canceled or claimed meanwhile is no longer parked.
      await runs.requestCancel(c.id, new Date());
      expect(await runs.park(c.id, `${c.id}.p2`)).toBe(false);
      await runs.claim(d.id, 'w2', inFuture(30_000), new Date());
      expect(await runs.release(d.id, 'w2')).toBe(true);
      expect(await runs.unparkOldest('wfl_park', '.u3')).toBeNull();
    });

    it("counts no sub-workflow run against its workflow's concurrency limit", async () => {
      const parent = queuedRun('wfl_nested');
      await runs.create(parent, new Date(0));
      await runs.claim(parent.id, 'w1', inFuture(30_000), new Date(), 2);
      const child = queuedRun('wfl_nested', { parentRunId: parent.id, parentNodeId: 'sub', depth: 1 });
      await runs.create(child, new Date(0));
      expect(await runs.claim(child.id, 'w1', inFuture(30_000), new Date())).toMatchObject({ status: 'running' });
      const [one, two] = [queuedRun('wfl_nested'), queuedRun('wfl_nested')];
      for (const run of [one, two]) await runs.create(run, new Date(0));
      expect(await runs.claim(one.id, 'w2', inFuture(30_000), new Date(), 2)).toMatchObject({ status: 'running' });
      expect(await runs.claim(two.id, 'w3', inFuture(30_000), new Date(), 2)).toBe(AT_CONCURRENCY_LIMIT);
    });

    it('lists queued and due waiting runs a page at a time, after a cursor', async () => {
      const at = (ms: number) => new Date(Date.UTC(2001, 0, 1) + ms);
      // Two share a creation time: the id orders them.
      const queued = [
        queuedRun('wfl_pages', { createdAt: at(0) }),
        queuedRun('wfl_pages', { createdAt: at(5) }),
        queuedRun('wfl_pages', { createdAt: at(5) }),
      ];
      for (const run of queued) await runs.create(run, new Date(0));
      const order = [queued[0], ...queued.slice(1).sort((x, y) => (x.id < y.id ? -1 : 1))].map((r) => r.id);
      const first = await runs.listQueued(at(1000), 2);
      expect(first.map((r) => r.id)).toEqual(order.slice(0, 2));
      const rest = await runs.listQueued(at(1000), 2, { at: first[1].createdAt, id: first[1].id });
      expect(rest.map((r) => r.id)).toEqual(order.slice(2));
      expect(await runs.listQueued(at(1000), 2, { at: rest[0].createdAt, id: rest[0].id })).toEqual([]);

      const waiting = [queuedRun('wfl_pages'), queuedRun('wfl_pages')];
      for (const [i, run] of waiting.entries()) {
        await runs.create(run, new Date(0));
        await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
        await runs.suspend(run.id, 'w1', [], at(10 + i), `${run.id}.w1`);
      }
      const due = await runs.listDueWaiting(at(1000), 1);
      expect(due.map((r) => r.id)).toEqual([waiting[0].id]);
      expect((await runs.listDueWaiting(at(1000), 1, { at: due[0].resumeAt!, id: due[0].id })).map((r) => r.id)).toEqual([waiting[1].id]);
    });

    it("counts queued runs of a workflow and of all, up to a bound, with the oldest one's creation", async () => {
      const workflowId = newId('wfl');
      expect(await runs.queued({ workflowId }, 10)).toEqual({ count: 0, oldestCreatedAt: null });
      const at = (ms: number) => new Date(Date.UTC(2000, 0, 1) + ms);
      const queued = [
        queuedRun(workflowId, { createdAt: at(20) }),
        queuedRun(workflowId, { createdAt: at(10) }),
        queuedRun(workflowId, { createdAt: at(30) }),
      ];
      for (const run of queued) await runs.create(run, new Date(0));
      expect(await runs.queued({ workflowId }, 10)).toEqual({ count: 3, oldestCreatedAt: at(10) });
      expect((await runs.queued({ workflowId }, 2)).count).toBe(2);
      // Running, waiting and finished runs are not queued.
      await runs.claim(queued[1].id, 'w1', inFuture(30_000), new Date());
      expect(await runs.queued({ workflowId }, 10)).toEqual({ count: 2, oldestCreatedAt: at(20) });
      await runs.requestCancel(queued[0].id, new Date());
      expect(await runs.queued({ workflowId }, 10)).toEqual({ count: 1, oldestCreatedAt: at(30) });
      // Every workflow's: at least this one's, bounded, and no younger than its oldest.
      const all = await runs.queued({}, 1_000_000);
      expect(all.count).toBeGreaterThanOrEqual(1);
      expect(all.oldestCreatedAt!.getTime()).toBeLessThanOrEqual(at(30).getTime());
      expect((await runs.queued({}, 1)).count).toBe(1);
    });

    it('tells the most queued runs acting as any one user', async () => {
      // Other cases leave runs queued: this user is made the fullest by one run.
      const before = await runs.queuedPerUserMax();
      const actingUserId = newId('usr');
      const mine = Array.from({ length: before + 1 }, () => queuedRun(newId('wfl'), { actingUserId, startedBy: actingUserId }));
      for (const run of mine) await runs.create(run, new Date(0));
      expect(await runs.queuedPerUserMax()).toBe(before + 1);
      // A claimed run is no longer queued.
      await runs.claim(mine[0].id, 'w1', inFuture(30_000), new Date());
      expect(await runs.queuedPerUserMax()).toBe(before);
    });

    it('discards a queued run never claimed, with its steps, and nothing else', async () => {
      const workflowId = newId('wfl');
      const fresh = queuedRun(workflowId, { steps: [{ ...step('a', 0), reused: true }] });
      const claimed = queuedRun(workflowId);
      for (const run of [fresh, claimed]) await runs.create(run, new Date(0));
      await runs.claim(claimed.id, 'w1', inFuture(30_000), new Date());
      expect(await runs.discardQueued(claimed.id)).toBe(false);
      expect(await runs.get(claimed.id)).toMatchObject({ status: 'running' });
      expect(await runs.discardQueued(fresh.id)).toBe(true);
      expect(await runs.get(fresh.id)).toBeNull();
      expect(await runs.discardQueued(fresh.id)).toBe(false);
      // Its idempotency key is free again: a retry starts the run once.
      const keyed = queuedRun(workflowId, { idempotencyKey: 'k-1' });
      await runs.create(keyed, new Date(0));
      expect(await runs.discardQueued(keyed.id)).toBe(true);
      const again = queuedRun(workflowId, { idempotencyKey: 'k-1' });
      expect(await runs.create(again, new Date(0))).toMatchObject({ created: true });
      // A run put back to queued after a lost worker was claimed once: it stands.
      await runs.claim(again.id, 'dead', new Date(Date.now() - 1), new Date(Date.now() - 30_000));
      await runs.requeueExpired(again.id, 'dead', `${again.id}.r1`, new Date());
      expect(await runs.discardQueued(again.id)).toBe(false);
    });

    it('keeps the output, the links, the sealed input and the reused steps of a run, and drops sealed state once it succeeded', async () => {
      const parent = queuedRun('wfl_links');
      await runs.create(parent, new Date(0));
      const child = queuedRun('wfl_links', {
        parentRunId: parent.id,
        parentNodeId: 'sub',
        depth: 1,
        retryOf: 'run_before',
        input: { token: '[REDACTED]' },
        sealedInput: 'v1.input',
        steps: [{ ...step('a', 0), reused: true, state: 'v1.a' }],
      });
      await runs.create(child, new Date(0));
      expect(await runs.get(child.id)).toMatchObject({
        parentRunId: parent.id,
        parentNodeId: 'sub',
        depth: 1,
        retryOf: 'run_before',
        input: { token: '[REDACTED]' },
        sealedInput: 'v1.input',
        steps: [{ nodeId: 'a', reused: true, state: 'v1.a' }],
      });
      const listed = (await runs.list({ parentRunId: parent.id }, { offset: 0, limit: 10 })).items;
      expect(listed.map((r) => [r.id, r.sealedInput])).toEqual([[child.id, null]]);
      expect(await runs.claim(child.id, 'w1', inFuture(30_000), new Date())).toMatchObject({ sealedInput: 'v1.input' });
      await runs.recordSteps(child.id, 'w1', [{ ...step('b', 1), state: 'v1.b', iterations: 3 }]);
      expect(
        await runs.complete(child.id, 'w1', [], { status: 'succeeded', error: null, finishedAt: new Date(), output: { answer: 42 } }),
      ).toBe(true);
      const done = await runs.get(child.id);
      expect(done).toMatchObject({ output: { answer: 42 } });
      expect(done?.steps.map((s) => [s.nodeId, s.state ?? null, s.iterations ?? null])).toEqual([
        ['a', null, null],
        ['b', null, 3],
      ]);
      expect((await runs.list({ parentRunId: parent.id }, { offset: 0, limit: 10 })).items[0].output).toBeUndefined();
    });

    it('requeues a run with an expired lease only while nothing changed', async () => {
      const run = queuedRun('wfl_requeue');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'dead', new Date(Date.now() - 1), new Date(Date.now() - 30_000));
      expect(await runs.requeueExpired(run.id, 'someone-else', `${run.id}.r1`, new Date())).toBe(false);
      expect(await runs.requeueExpired(run.id, 'dead', `${run.id}.r1`, new Date())).toBe(true);
      expect(await runs.get(run.id)).toMatchObject({ status: 'queued', leaseOwner: null, jobId: `${run.id}.r1` });
      expect((await runs.listQueued(inFuture(1000), 1000)).map((r) => r.id)).toContain(run.id);
      expect(await runs.requeueExpired(run.id, 'dead', `${run.id}.r2`, new Date())).toBe(false);
    });

    it('releases a run at shutdown and abandons one that lost too many workers', async () => {
      const run = queuedRun('wfl_release');
      await runs.create(run, new Date(0));
      await runs.claim(run.id, 'w1', inFuture(30_000), new Date());
      expect(await runs.release(run.id, 'w2')).toBe(false);
      expect(await runs.release(run.id, 'w1')).toBe(true);
      expect((await runs.get(run.id))?.status).toBe('queued');
      expect(await runs.abandon(run.id, { code: 'UNAVAILABLE', message: 'lost' }, new Date())).toBe(true);
      expect(await runs.get(run.id)).toMatchObject({ status: 'failed', error: { code: 'UNAVAILABLE' } });
      expect(await runs.abandon(run.id, { code: 'UNAVAILABLE', message: 'lost' }, new Date())).toBe(false);
    });

    it('lists runs newest first, filtered by workflow, status and visibility', async () => {
      const w = workflow('usr_lister');
      await workflows.create(w);
      const older = queuedRun(w.id, { createdAt: new Date(Date.now() - 1000) });
      const newer = queuedRun(w.id);
      await runs.create(older, new Date(0));
      await runs.create(newer, new Date(0));
      await runs.requestCancel(newer.id, new Date());
      const all = await runs.list({ workflowId: w.id }, { offset: 0, limit: 10 });
      expect(all.items.map((r) => r.id)).toEqual([newer.id, older.id]);
      expect(all.total).toBe(2);
      expect(all.items[0].definition).toBeNull();
      expect((await runs.list({ workflowId: w.id, status: 'queued' }, { offset: 0, limit: 10 })).items.map((r) => r.id)).toEqual([
        older.id,
      ]);
      expect((await runs.list({ visibleTo: 'usr_lister' }, { offset: 0, limit: 1 })).total).toBe(2);
      expect((await runs.list({ visibleTo: 'usr_stranger', workflowId: w.id }, { offset: 0, limit: 10 })).total).toBe(0);
      await runs.deleteForWorkflow(w.id);
      expect(await runs.get(older.id)).toBeNull();
    });

    it('tells a deleted workflow from one it never had', async () => {
      const w = workflow('usr_deleter');
      await workflows.create(w);
      expect(await workflows.wasDeleted(w.id)).toBe(false);
      expect(await workflows.delete(w.id)).toBe(true);
      expect(await workflows.wasDeleted(w.id)).toBe(true);
      expect(await workflows.delete(w.id)).toBe(false);
      expect(await workflows.wasDeleted(w.id)).toBe(true);
      expect(await workflows.wasDeleted('wfl_never_had')).toBe(false);
    });

    it('keeps the id of a workflow being deleted as deleted before it goes, and tells one it has or had from a stranger', async () => {
      const w = workflow('usr_marker');
      await workflows.create(w);
      expect(await workflows.had(w.id)).toBe(true);
      await workflows.markDeleted(w.id);
      // Between the mark and the workflow's own deletion (a job claimed then, a crash): known as deleted.
      expect(await workflows.wasDeleted(w.id)).toBe(true);
      expect((await workflows.get(w.id))?.id).toBe(w.id);
      expect(await workflows.delete(w.id)).toBe(true);
      expect(await workflows.had(w.id)).toBe(true);
      expect(await workflows.had('wfl_never_had')).toBe(false);
    });
  });
});
