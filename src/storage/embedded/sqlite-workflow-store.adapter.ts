import { Page, PageRequest } from '../../common/page';
import type { WorkflowDefinition } from '../../domain/workflow-definition.model';
import type { Role } from '../../domain/membership.model';
import type { StartableWorkflow, WorkflowSettings } from '../../domain/workflow.model';
import {
  ActiveTriggers,
  VisibleWorkflow,
  settingsFromJson,
  withDraftJson,
  Workflow,
  WorkflowSchedule,
  WorkflowTool,
  WorkflowVersion,
  WorkflowVersionSummary,
} from '../../domain/workflow.model';
import { NewVersion, ScheduledWorkflow, ToolWorkflow, WorkflowStore } from '../../domain/workflow-store.port';
import { SqliteDb, toSqlDate } from './sqlite-database';
import { SqliteMembershipScope } from './sqlite-membership-store.adapter';

interface WorkflowRow {
  id: string;
  name: string;
  owner_id: string;
  draft: string;
  active_version_id: string | null;
  active_version: number | null;
  activated_by: string | null;
  draft_saved_by: string | null;
  latest_version: number;
  settings: string | null;
  schedule: string | null;
  tool: string | null;
  created_at: string;
  updated_at: string;
}

interface VersionRow {
  id: string;
  workflow_id: string;
  version: number;
  definition?: string;
  created_by: string;
  created_at: string;
}

/** WorkflowStore.startable's row: id, name, active version id and number, settings, the user's role. */
type StartableRow = [string, string, string | null, number | null, string | null, Role | null];

const toWorkflow = (row: WorkflowRow): Workflow => withDraftJson(toHead(row), row.draft);

const toHead = (row: WorkflowRow): Omit<Workflow, 'draft'> => ({
  id: row.id,
  name: row.name,
  ownerId: row.owner_id,
  activeVersionId: row.active_version_id,
  activeVersion: row.active_version,
  activatedBy: row.activated_by,
  draftSavedBy: row.draft_saved_by,
  latestVersion: row.latest_version,
  settings: settingsFromJson(row.settings),
  schedule: row.schedule ? (JSON.parse(row.schedule) as WorkflowSchedule) : null,
  tool: row.tool ? (JSON.parse(row.tool) as WorkflowTool) : null,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toSummary = (row: VersionRow): WorkflowVersionSummary => ({
  id: row.id,
  workflowId: row.workflow_id,
  version: row.version,
  createdBy: row.created_by,
  createdAt: new Date(row.created_at),
});

const toVersion = (row: VersionRow): WorkflowVersion => ({
  ...toSummary(row),
  definition: JSON.parse(row.definition!) as WorkflowDefinition,
});

export class SqliteWorkflowStore extends WorkflowStore {
  private readonly statements;
  private readonly members: SqliteMembershipScope<WorkflowRow>;
  private readonly createTx;
  private readonly deleteTx;
  private readonly publishTx;

  constructor(db: SqliteDb) {
    super();
    this.members = new SqliteMembershipScope<WorkflowRow>(db, 'workflow', 'workflows');
    this.statements = {
      insert: db.prepare(
        `INSERT INTO workflows (id, name, owner_id, draft, draft_saved_by, active_version_id, active_version, latest_version, settings, schedule, created_at, updated_at)
         VALUES (@id, @name, @owner_id, @draft, @draft_saved_by, NULL, NULL, 0, @settings, NULL, @created_at, @updated_at)`,
      ),
      get: db.prepare('SELECT * FROM workflows WHERE id = ?'),
      recordDeleted: db.prepare('INSERT OR IGNORE INTO deleted_workflows (id, deleted_at) VALUES (?, ?)'),
      wasDeleted: db.prepare('SELECT 1 FROM deleted_workflows WHERE id = ?').pluck(),
      // Positional (raw) columns: no object a row, on the path of every webhook.
      startable: db
        .prepare(
          `SELECT w.id, w.name, w.active_version_id, w.active_version, w.settings, m.role FROM workflows w
           LEFT JOIN memberships m ON m.resource_type = 'workflow' AND m.resource_id = w.id AND m.user_id = ?
           WHERE w.id = ?`,
        )
        .raw(),
      settings: db.prepare('SELECT settings FROM workflows WHERE id = ?').pluck(),
      updateDraft: db.prepare(
        'UPDATE workflows SET name = ?, draft = ?, updated_at = ?, draft_saved_by = ?, settings = COALESCE(?, settings) WHERE id = ?',
      ),
      listScheduled: db.prepare('SELECT id, schedule FROM workflows WHERE schedule IS NOT NULL'),
      names: db.prepare('SELECT id, name FROM workflows WHERE id IN (SELECT value FROM json_each(?))'),
      referencing: db.prepare(
        `SELECT w.id, w.name, instr(w.draft, @text) > 0 AS in_draft, COALESCE(instr(v.definition, @text) > 0, 0) AS in_active
         FROM workflows w LEFT JOIN workflow_versions v ON v.id = w.active_version_id
         WHERE instr(w.draft, @text) > 0 OR instr(v.definition, @text) > 0
         ORDER BY w.created_at DESC, w.id`,
      ),
      listTools: db.prepare('SELECT id, name, tool FROM workflows WHERE tool IS NOT NULL'),
      listActive: db.prepare('SELECT id, name, active_version_id FROM workflows WHERE active_version_id IS NOT NULL ORDER BY id'),
      delete: db.prepare('DELETE FROM workflows WHERE id = ?'),
      deleteVersions: db.prepare('DELETE FROM workflow_versions WHERE workflow_id = ?'),
      insertVersion: db.prepare(
        `INSERT INTO workflow_versions (id, workflow_id, version, definition, created_by, created_at)
         VALUES (@id, @workflow_id, @version, @definition, @created_by, @created_at)`,
      ),
      setActive: db.prepare(
        `UPDATE workflows SET active_version_id = @version_id, active_version = @version, latest_version = MAX(latest_version, @version),
           activated_by = @activated_by, updated_at = @updated_at, schedule = @schedule, tool = @tool
         WHERE id = @id`,
      ),
      listVersions: db.prepare(
        'SELECT id, workflow_id, version, created_by, created_at FROM workflow_versions WHERE workflow_id = ? ORDER BY version DESC',
      ),
      getVersion: db.prepare('SELECT * FROM workflow_versions WHERE workflow_id = ? AND version = ?'),
      getVersionById: db.prepare('SELECT * FROM workflow_versions WHERE id = ?'),
    };
    this.createTx = db.transaction((w: Workflow) => {
      this.statements.insert.run({
        id: w.id,
        name: w.name,
        owner_id: w.ownerId,
        draft: JSON.stringify(w.draft),
        draft_saved_by: w.draftSavedBy,
        settings: JSON.stringify(w.settings ?? {}),
        created_at: toSqlDate(w.createdAt),
        updated_at: toSqlDate(w.updatedAt),
      });
      this.members.insertOwner(w.id, w.ownerId, w.createdAt);
    });
    this.deleteTx = db.transaction((id: string) => {
      this.members.deleteMembers(id);
      this.statements.deleteVersions.run(id);
      const deleted = this.statements.delete.run(id).changes > 0;
      if (deleted) this.statements.recordDeleted.run(id, toSqlDate(new Date()));
      return deleted;
    });
    this.publishTx = db.transaction((workflowId: string, created: NewVersion, triggers: ActiveTriggers): WorkflowVersion | null => {
      const row = this.statements.get.get(workflowId) as WorkflowRow | undefined;
      if (!row) return null;
      const version = row.latest_version + 1;
      this.statements.insertVersion.run({
        id: created.id,
        workflow_id: workflowId,
        version,
        definition: JSON.stringify(created.definition),
        created_by: created.createdBy,
        created_at: toSqlDate(created.createdAt),
      });
      this.setActive(workflowId, created.id, version, created.createdAt, triggers, created.createdBy);
      return { ...created, workflowId, version };
    });
  }

  async create(workflow: Workflow): Promise<void> {
    this.createTx(workflow);
  }

  async get(id: string): Promise<Workflow | null> {
    const row = this.statements.get.get(id) as WorkflowRow | undefined;
    return row ? toWorkflow(row) : null;
  }

  async startable(id: string, userId: string): Promise<{ workflow: StartableWorkflow; role: Role | null } | null> {
    const row = this.statements.startable.get(userId, id) as StartableRow | undefined;
    if (!row) return null;
    const [workflowId, name, activeVersionId, activeVersion, settings, role] = row;
    return {
      workflow: {
        id: workflowId,
        name,
        activeVersionId,
        activeVersion,
        settings: settingsFromJson(settings),
      },
      role,
    };
  }

  async settings(id: string): Promise<WorkflowSettings | undefined> {
    const settings = this.statements.settings.get(id) as string | null | undefined;
    if (settings === undefined) return undefined;
    return settingsFromJson(settings);
  }

  async listVisible(userId: string, page: PageRequest): Promise<Page<VisibleWorkflow>> {
    return this.members.visible(userId, page, toWorkflow);
  }

  async updateDraft(
    id: string,
    name: string,
    draft: WorkflowDefinition,
    updatedAt: Date,
    savedBy: string,
    settings?: WorkflowSettings,
  ): Promise<boolean> {
    const changes = this.statements.updateDraft.run(
      name,
      JSON.stringify(draft),
      toSqlDate(updatedAt),
      savedBy,
      settings ? JSON.stringify(settings) : null,
      id,
    ).changes;
    return changes > 0;
  }

  async delete(id: string): Promise<boolean> {
    return this.deleteTx(id);
  }

  async wasDeleted(id: string): Promise<boolean> {
    return this.statements.wasDeleted.get(id) !== undefined;
  }

  async markDeleted(id: string): Promise<void> {
    this.statements.recordDeleted.run(id, toSqlDate(new Date()));
  }

  async had(id: string): Promise<boolean> {
    return this.statements.settings.get(id) !== undefined || this.statements.wasDeleted.get(id) !== undefined;
  }

  async publish(workflowId: string, version: NewVersion, triggers: ActiveTriggers): Promise<WorkflowVersion | null> {
    return this.publishTx(workflowId, version, triggers);
  }

  async listVersions(workflowId: string): Promise<WorkflowVersionSummary[]> {
    return (this.statements.listVersions.all(workflowId) as VersionRow[]).map(toSummary);
  }

  async getVersion(workflowId: string, version: number): Promise<WorkflowVersion | null> {
    const row = this.statements.getVersion.get(workflowId, version) as VersionRow | undefined;
    return row ? toVersion(row) : null;
  }

  async getVersionById(versionId: string): Promise<WorkflowVersion | null> {
    const row = this.statements.getVersionById.get(versionId) as VersionRow | undefined;
    return row ? toVersion(row) : null;
  }

  async activate(workflowId: string, version: number, now: Date, triggers: ActiveTriggers, activatedBy: string): Promise<boolean> {
    const row = this.statements.getVersion.get(workflowId, version) as VersionRow | undefined;
    if (!row) return false;
    return this.setActive(workflowId, row.id, row.version, now, triggers, activatedBy);
  }

  private setActive(
    workflowId: string,
    versionId: string,
    version: number,
    now: Date,
    { schedule, tool }: ActiveTriggers,
    activatedBy: string,
  ): boolean {
    const json = (value: unknown) => (value ? JSON.stringify(value) : null);
    const params = {
      id: workflowId,
      version_id: versionId,
      version,
      activated_by: activatedBy,
      updated_at: toSqlDate(now),
      schedule: json(schedule),
      tool: json(tool),
    };
    return this.statements.setActive.run(params).changes > 0;
  }

  async referencing(text: string): Promise<{ workflowId: string; name: string; inDraft: boolean; inActiveVersion: boolean }[]> {
    const rows = this.statements.referencing.all({ text }) as { id: string; name: string; in_draft: number; in_active: number }[];
    return rows.map((row) => ({ workflowId: row.id, name: row.name, inDraft: row.in_draft === 1, inActiveVersion: row.in_active === 1 }));
  }

  async names(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = this.statements.names.all(JSON.stringify([...new Set(ids)])) as Pick<WorkflowRow, 'id' | 'name'>[];
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  async listActive(): Promise<{ workflowId: string; name: string; versionId: string }[]> {
    const rows = this.statements.listActive.all() as Pick<WorkflowRow, 'id' | 'name' | 'active_version_id'>[];
    return rows.map((row) => ({ workflowId: row.id, name: row.name, versionId: row.active_version_id! }));
  }

  async listTools(): Promise<ToolWorkflow[]> {
    const rows = this.statements.listTools.all() as Pick<WorkflowRow, 'id' | 'name' | 'tool'>[];
    return rows.map((row) => ({ workflowId: row.id, name: row.name, tool: JSON.parse(row.tool!) as WorkflowTool }));
  }

  async listScheduled(): Promise<ScheduledWorkflow[]> {
    const rows = this.statements.listScheduled.all() as Pick<WorkflowRow, 'id' | 'schedule'>[];
    return rows.map((row) => ({ workflowId: row.id, schedule: JSON.parse(row.schedule!) as WorkflowSchedule }));
  }
}
