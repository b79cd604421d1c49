import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { newId } from '../common/ids';
import { ShutdownSignal } from '../common/shutdown-signal';
import type { Role } from '../domain/membership.model';
import { Run } from '../domain/run.model';
import { UnwatchedStoreCommits } from '../domain/store-commits.port';
import { WorkflowDefinition } from '../domain/workflow-definition.model';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteMembershipStore } from '../storage/embedded/sqlite-membership-store.adapter';
import { SqliteWorkflowStore } from '../storage/embedded/sqlite-workflow-store.adapter';
import { RunAdmission } from './run-admission.service';
import { RunEvents } from './run-events';
import { RunsService } from './runs.service';

const DRAFT: WorkflowDefinition = { nodes: [{ id: 'in', type: 'webhook-trigger', version: 1, parameters: {} }], edges: [], variables: [] };
const owner: Principal = { userId: 'usr_owner', keyId: null, isAdmin: false };
const member: Principal = { userId: 'usr_member', keyId: null, isAdmin: false };

/**
 * Who may start a run, and of what, as the store says at the moment of the call: the start reads the
 * workflow and the caller's role each time (nothing kept between calls), in one read on SQLite.
 */
describe('RunsService: starting a run', () => {
  let dir: string;
  let db: SqliteDb;
  let workflows: SqliteWorkflowStore;
  let memberships: SqliteMembershipStore;
  let events: RunEvents;
  let runs: RunsService;
  /** What admission was handed: the runs accepted. */
  let accepted: Run[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-start-'));
    db = openSqliteDatabase(dir);
    workflows = new SqliteWorkflowStore(db);
    memberships = new SqliteMembershipStore(db);
    events = new RunEvents(new UnwatchedStoreCommits());
    accepted = [];
    const admission = { accept: async (run: Run) => (accepted.push(run), { created: true, run }) } as unknown as RunAdmission;
    const none = {} as never;
    runs = new RunsService(
      none,
      workflows,
      new AccessPolicy(memberships),
      admission,
      none,
      none,
      events,
      pino({ level: 'silent' }),
      none,
      new ShutdownSignal(),
      none,
    );
  });

  afterEach(() => {
    events.onModuleDestroy();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const createWorkflow = async (): Promise<string> => {
    const now = new Date();
    const id = newId('wfl');
    await workflows.create({
      id,
      name: 'hooked',
      ownerId: owner.userId,
      draft: DRAFT,
      activeVersionId: null,
      activeVersion: null,
      activatedBy: null,
      draftSavedBy: owner.userId,
      latestVersion: 0,
      settings: {},
      schedule: null,
      tool: null,
      createdAt: now,
      updatedAt: now,
    });
    return id;
  };
  const publish = async (workflowId: string) =>
    (await workflows.publish(
      workflowId,
      { id: newId('wfv'), definition: DRAFT, createdBy: owner.userId, createdAt: new Date() },
      { schedule: null, tool: null },
    ))!;
  const share = (workflowId: string, role: Role) =>
    memberships.setRole({ resourceType: 'workflow', resourceId: workflowId, userId: member.userId, role, createdAt: new Date() });
  const start = (principal: Principal, workflowId: string, runType: 'production' | 'test' = 'production') =>
    runs.start(principal, workflowId, { runType, input: { q: 1 } });

  it('refuses a caller at the first start after their role was removed or lowered', async () => {
    const id = await createWorkflow();
    const v1 = await publish(id);
    await share(id, 'editor');
    await expect(start(member, id)).resolves.toMatchObject({ created: true, workflowName: 'hooked' });

    await share(id, 'viewer');
    await expect(start(member, id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    // A viewer may still call its MCP tool: the role the door needs, read as it stands.
    await expect(runs.startAsViewer(member, id, v1.id, {})).resolves.toMatchObject({ status: 'queued' });

    await memberships.remove('workflow', id, member.userId);
    await expect(start(member, id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(runs.startAsViewer(member, id, v1.id, {})).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(start(member, 'wfl_none')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(accepted).toHaveLength(2);
  });

  it('starts the version published a moment before, and refuses a tool call read from the one before it', async () => {
    const id = await createWorkflow();
    await expect(start(owner, id)).rejects.toMatchObject({ code: 'CONFLICT' });
    const v1 = await publish(id);
    await start(owner, id);
    const v2 = await publish(id);
    await start(owner, id);
    expect(accepted.map((run) => [run.versionId, run.version])).toEqual([
      [v1.id, 1],
      [v2.id, 2],
    ]);
    await expect(runs.startAsViewer(owner, id, v1.id, {})).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('reads the workflow without its draft and the role in one read for a published run; a test run gets the draft', async () => {
    const id = await createWorkflow();
    await publish(id);
    const get = jest.spyOn(workflows, 'get');
    const getRole = jest.spyOn(memberships, 'getRole');
    await start(owner, id);
    expect(get).not.toHaveBeenCalled();
    expect(getRole).not.toHaveBeenCalled();
    expect(accepted[0]).toMatchObject({ runType: 'production', definition: null, actingUserId: owner.userId });

    await start(owner, id, 'test');
    expect(accepted[1]).toMatchObject({ runType: 'test', versionId: null, definition: DRAFT });
  });
});
