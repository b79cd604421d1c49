import { LruCache } from '../common/lru-cache';
import type { WorkflowSettings } from '../domain/workflow.model';
import { WorkflowStore } from '../domain/workflow-store.port';

/** Settings are read again after this long: a changed concurrency limit applies within it. */
const SETTINGS_TTL_MS = 2_000;

/** The workflows' settings as the run worker reads them: from the store at most once per SETTINGS_TTL_MS a workflow. */
export class WorkflowSettingsCache {
  private readonly cache = new LruCache<string, { settings: WorkflowSettings | undefined; until: number }>(1024);

  constructor(private readonly workflows: WorkflowStore) {}

  /** The workflow's settings; undefined when the workflow is gone. */
  async get(workflowId: string): Promise<WorkflowSettings | undefined> {
    const fresh = this.fresh(workflowId);
    if (fresh) return fresh.settings;
    const settings = (await this.workflows.get(workflowId))?.settings;
    this.cache.set(workflowId, { settings, until: Date.now() + SETTINGS_TTL_MS });
    return settings;
  }

  /** The workflow's concurrency limit (none for a job that names no workflow). */
  async maxRunning(workflowId: string | undefined): Promise<number | undefined> {
    return workflowId ? (await this.get(workflowId))?.maxConcurrentRuns : undefined;
  }

  /** What `get` would answer without reading the store, if it would not; synchronous. */
  fresh(workflowId: string): { settings: WorkflowSettings | undefined } | undefined {
    const cached = this.cache.get(workflowId);
    return cached && cached.until > Date.now() ? cached : undefined;
  }
}
