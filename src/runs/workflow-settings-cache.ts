import { LruCache } from '../common/lru-cache';
import type { WorkflowSettings } from '../domain/workflow.model';
import { WorkflowStore } from '../domain/workflow-store.port';

/** Settings are read again after this long: a changed concurrency limit applies within it. */
const SETTINGS_TTL_MS = 2_000;
/**
 * Asked for in the last this-long of their life, the settings are read again in the background, so
 * a workflow in steady use never finds them expired: an expired entry makes its next run's claim
 * wait for a read, in a commit of its own instead of inside its job's (RunWorker.claiming).
 */
const REFRESH_AHEAD_MS = 500;

/** The workflows' settings as the run worker reads them: from the store at most once per SETTINGS_TTL_MS a workflow, in steady use about once per SETTINGS_TTL_MS - REFRESH_AHEAD_MS. */
export class WorkflowSettingsCache {
  private readonly cache = new LruCache<string, { settings: WorkflowSettings | undefined; until: number }>(1024);
  /** Workflows whose settings are being read again ahead of their expiry. */
  private readonly refreshing = new Set<string>();

  constructor(private readonly workflows: WorkflowStore) {}

  /** The workflow's settings; undefined when the workflow is gone. */
  async get(workflowId: string): Promise<WorkflowSettings | undefined> {
    const fresh = this.fresh(workflowId);
    return fresh ? fresh.settings : this.read(workflowId);
  }

  /** The workflow's concurrency limit (none for a job that names no workflow). */
  async maxRunning(workflowId: string | undefined): Promise<number | undefined> {
    return workflowId ? (await this.get(workflowId))?.maxConcurrentRuns : undefined;
  }

  /**
   * What `get` would answer without reading the store, if it would not; synchronous, and callable
   * inside a write transaction (the read ahead of expiry it may start runs after the caller's code).
   */
  fresh(workflowId: string): { settings: WorkflowSettings | undefined } | undefined {
    const cached = this.cache.get(workflowId);
    if (!cached) return undefined;
    const left = cached.until - Date.now();
    if (left <= 0) return undefined;
    if (left < REFRESH_AHEAD_MS) this.refreshSoon(workflowId);
    return cached;
  }

  private async read(workflowId: string): Promise<WorkflowSettings | undefined> {
    // The settings column alone: the draft, which may be large, is not copied out of the store, nor the other columns parsed.
    const settings = await this.workflows.settings(workflowId);
    this.cache.set(workflowId, { settings, until: Date.now() + SETTINGS_TTL_MS });
    return settings;
  }

  /** One read at a time a workflow; one that fails leaves the entry to expire, and the next `get` reads (and fails) itself. */
  private refreshSoon(workflowId: string): void {
    if (this.refreshing.has(workflowId)) return;
    this.refreshing.add(workflowId);
    queueMicrotask(() => {
      this.read(workflowId)
        .catch(() => undefined)
        .finally(() => this.refreshing.delete(workflowId));
    });
  }
}
