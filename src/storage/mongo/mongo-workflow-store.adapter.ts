import { Connection, Model } from 'mongoose';
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
  WorkflowTool,
  WorkflowVersion,
  WorkflowVersionSummary,
} from '../../domain/workflow.model';
import { NewVersion, ScheduledWorkflow, ToolWorkflow, WorkflowStore } from '../../domain/workflow-store.port';
import { MongoMembershipScope } from './mongo-membership-store.adapter';
import { DeletedWorkflowDoc, workflowModels, WorkflowDoc, WorkflowVersionDoc } from './workflows.schema';

const toWorkflow = (doc: WorkflowDoc): Workflow => withDraftJson(toHead(doc), doc.draftJson);

const toHead = (doc: WorkflowDoc): Omit<Workflow, 'draft'> => ({
  id: doc._id,
  name: doc.name,
  ownerId: doc.ownerId,
  activeVersionId: doc.activeVersionId ?? null,
  activeVersion: doc.activeVersion ?? null,
  activatedBy: doc.activatedBy ?? null,
  draftSavedBy: doc.draftSavedBy ?? null,
  latestVersion: doc.latestVersion ?? 0,
  settings: settingsFromJson(doc.settingsJson),
  schedule: doc.schedule ?? null,
  tool: doc.toolJson ? (JSON.parse(doc.toolJson) as WorkflowTool) : null,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

const toSummary = (doc: Omit<WorkflowVersionDoc, 'definitionJson'>): WorkflowVersionSummary => ({
  id: doc._id,
  workflowId: doc.workflowId,
  version: doc.version,
  createdBy: doc.createdBy,
  createdAt: doc.createdAt,
});

const toVersion = (doc: WorkflowVersionDoc): WorkflowVersion => ({
  ...toSummary(doc),
  definition: JSON.parse(doc.definitionJson) as WorkflowDefinition,
});

const triggerFields = ({ schedule, tool }: ActiveTriggers) => ({ schedule, toolJson: tool ? JSON.stringify(tool) : null });

export class MongoWorkflowStore extends WorkflowStore {
  private readonly workflows: Model<WorkflowDoc>;
  private readonly versions: Model<WorkflowVersionDoc>;
  private readonly members: MongoMembershipScope;
  private readonly deleted: Model<DeletedWorkflowDoc>;

  constructor(connection: Connection) {
    super();
    const models = workflowModels(connection);
    this.workflows = models.workflows;
    this.versions = models.versions;
    this.deleted = models.deletedWorkflows;
    this.members = new MongoMembershipScope(connection, 'workflow');
  }

  async create(w: Workflow): Promise<void> {
    const doc: WorkflowDoc = {
      _id: w.id,
      name: w.name,
      ownerId: w.ownerId,
      draftJson: JSON.stringify(w.draft),
      activeVersionId: null,
      activeVersion: null,
      activatedBy: null,
      draftSavedBy: w.draftSavedBy,
      latestVersion: 0,
      settingsJson: JSON.stringify(w.settings ?? {}),
      schedule: null,
      toolJson: null,
      createdAt: w.createdAt,
      updatedAt: w.updatedAt,
    };
    await this.members.createOwned(this.workflows, doc, w.ownerId, w.createdAt);
  }

  async get(id: string): Promise<Workflow | null> {
    const doc = await this.workflows.findById(id).lean<WorkflowDoc>();
    return doc ? toWorkflow(doc) : null;
  }

  /** The workflow's head without its draft and the user's role, read side by side (two finds, one round trip's wait). */
  async startable(id: string, userId: string): Promise<{ workflow: StartableWorkflow; role: Role | null } | null> {
    const [doc, role] = await Promise.all([
      this.workflows
        .findById(id, { name: 1, activeVersionId: 1, activeVersion: 1, settingsJson: 1 })
        .lean<Pick<WorkflowDoc, '_id' | 'name' | 'activeVersionId' | 'activeVersion' | 'settingsJson'>>(),
      this.members.role(id, userId),
    ]);
    if (!doc) return null;
    return {
      workflow: {
        id: doc._id,
        name: doc.name,
        activeVersionId: doc.activeVersionId ?? null,
        activeVersion: doc.activeVersion ?? null,
        settings: settingsFromJson(doc.settingsJson),
      },
      role,
    };
  }

  async settings(id: string): Promise<WorkflowSettings | undefined> {
    const doc = await this.workflows.findById(id, { settingsJson: 1 }).lean<Pick<WorkflowDoc, '_id' | 'settingsJson'>>();
    if (!doc) return undefined;
    return settingsFromJson(doc.settingsJson);
  }

  async listVisible(userId: string, page: PageRequest): Promise<Page<VisibleWorkflow>> {
    return this.members.visible(userId, page, this.workflows, toWorkflow);
  }

  async updateDraft(
    id: string,
    name: string,
    draft: WorkflowDefinition,
    updatedAt: Date,
    savedBy: string,
    settings?: WorkflowSettings,
  ): Promise<boolean> {
    const result = await this.workflows.updateOne(
      { _id: id },
      {
        $set: {
          name,
          draftJson: JSON.stringify(draft),
          draftSavedBy: savedBy,
          updatedAt,
          ...(settings ? { settingsJson: JSON.stringify(settings) } : {}),
        },
      },
    );
    return result.matchedCount > 0;
  }

  async delete(id: string): Promise<boolean> {
    // Recorded first: a crash before the workflow goes leaves its id known as deleted, never a stranger.
    if (await this.workflows.exists({ _id: id })) await this.markDeleted(id);
    await this.members.deleteMembers(id);
    await this.versions.deleteMany({ workflowId: id });
    const result = await this.workflows.deleteOne({ _id: id });
    return result.deletedCount > 0;
  }

  async markDeleted(id: string): Promise<void> {
    await this.deleted.updateOne({ _id: id }, { $setOnInsert: { deletedAt: new Date() } }, { upsert: true });
  }

  async had(id: string): Promise<boolean> {
    return (await this.workflows.exists({ _id: id })) !== null || (await this.wasDeleted(id));
  }

  async wasDeleted(id: string): Promise<boolean> {
    return (await this.deleted.exists({ _id: id })) !== null;
  }

  /** The increment hands out the number; activation and triggers are one update of the workflow. */
  async publish(workflowId: string, created: NewVersion, triggers: ActiveTriggers): Promise<WorkflowVersion | null> {
    const doc = await this.workflows
      .findOneAndUpdate({ _id: workflowId }, { $inc: { latestVersion: 1 } }, { returnDocument: 'after', projection: { latestVersion: 1 } })
      .lean<Pick<WorkflowDoc, 'latestVersion'>>();
    if (!doc) return null;
    const version: WorkflowVersionDoc = {
      _id: created.id,
      workflowId,
      version: doc.latestVersion,
      definitionJson: JSON.stringify(created.definition),
      createdBy: created.createdBy,
      createdAt: created.createdAt,
    };
    await this.versions.create(version);
    // A concurrent, later publish may have activated a higher number already: keep that one, with its triggers.
    await this.workflows.updateOne(
      { _id: workflowId, $or: [{ activeVersion: null }, { activeVersion: { $lt: version.version } }] },
      {
        $set: {
          activeVersionId: created.id,
          activeVersion: version.version,
          activatedBy: created.createdBy,
          updatedAt: created.createdAt,
          ...triggerFields(triggers),
        },
      },
    );
    return toVersion(version);
  }

  async listVersions(workflowId: string): Promise<WorkflowVersionSummary[]> {
    const docs = await this.versions
      .find({ workflowId }, { definitionJson: 0 })
      .sort({ version: -1 })
      .lean<Omit<WorkflowVersionDoc, 'definitionJson'>[]>();
    return docs.map(toSummary);
  }

  async getVersion(workflowId: string, version: number): Promise<WorkflowVersion | null> {
    const doc = await this.versions.findOne({ workflowId, version }).lean<WorkflowVersionDoc>();
    return doc ? toVersion(doc) : null;
  }

  async getVersionById(versionId: string): Promise<WorkflowVersion | null> {
    const doc = await this.versions.findById(versionId).lean<WorkflowVersionDoc>();
    return doc ? toVersion(doc) : null;
  }

  async activate(workflowId: string, version: number, now: Date, triggers: ActiveTriggers, activatedBy: string): Promise<boolean> {
    const doc = await this.versions.findOne({ workflowId, version }, { _id: 1 }).lean<{ _id: string }>();
    if (!doc) return false;
    const result = await this.workflows.updateOne(
      { _id: workflowId },
      { $set: { activeVersionId: doc._id, activeVersion: version, activatedBy, updatedAt: now, ...triggerFields(triggers) } },
    );
    return result.matchedCount > 0;
  }

  async referencing(text: string): Promise<{ workflowId: string; name: string; inDraft: boolean; inActiveVersion: boolean }[]> {
    const contains = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const versions = await this.versions.find({ definitionJson: contains }, { _id: 1 }).lean<{ _id: string }[]>();
    const activeIds = new Set(versions.map((v) => v._id));
    const docs = await this.workflows
      .find({ $or: [{ draftJson: contains }, { activeVersionId: { $in: [...activeIds] } }] }, { name: 1, draftJson: 1, activeVersionId: 1 })
      .sort({ createdAt: -1, _id: 1 })
      .lean<Pick<WorkflowDoc, '_id' | 'name' | 'draftJson' | 'activeVersionId'>[]>();
    return docs.map((doc) => ({
      workflowId: doc._id,
      name: doc.name,
      inDraft: doc.draftJson.includes(text),
      inActiveVersion: doc.activeVersionId !== null && activeIds.has(doc.activeVersionId),
    }));
  }

  async names(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const docs = await this.workflows.find({ _id: { $in: [...new Set(ids)] } }, { name: 1 }).lean<Pick<WorkflowDoc, '_id' | 'name'>[]>();
    return new Map(docs.map((doc) => [doc._id, doc.name]));
  }

  async listActive(): Promise<{ workflowId: string; name: string; versionId: string }[]> {
    const docs = await this.workflows
      .find({ activeVersionId: { $type: 'string' } }, { name: 1, activeVersionId: 1 })
      .sort({ _id: 1 })
      .lean<Pick<WorkflowDoc, '_id' | 'name' | 'activeVersionId'>[]>();
    return docs.map((doc) => ({ workflowId: doc._id, name: doc.name, versionId: doc.activeVersionId! }));
  }

  async listTools(): Promise<ToolWorkflow[]> {
    const docs = await this.workflows
      .find({ toolJson: { $type: 'string' } }, { name: 1, toolJson: 1 })
      .lean<Pick<WorkflowDoc, '_id' | 'name' | 'toolJson'>[]>();
    return docs.map((doc) => ({ workflowId: doc._id, name: doc.name, tool: JSON.parse(doc.toolJson!) as WorkflowTool }));
  }

  async listScheduled(): Promise<ScheduledWorkflow[]> {
    const docs = await this.workflows
      .find({ schedule: { $type: 'object' } }, { schedule: 1 })
      .lean<Pick<WorkflowDoc, '_id' | 'schedule'>[]>();
    return docs.map((doc) => ({ workflowId: doc._id, schedule: doc.schedule! }));
  }
}
