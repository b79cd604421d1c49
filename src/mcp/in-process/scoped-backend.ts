import { isAppError, ErrorCode } from '../../common/app-error';
import { ScopeSet } from '../../oauth/oauth-scopes';
import type { ApprovalDecision, McpBackend } from '../mcp-backend.port';

/**
 * The backend of a caller whose OAuth token carries scopes: every tool, resource, prompt and task
 * of the MCP server reaches the service through its McpBackend, so this one wrapper is where the
 * scopes are enforced (ScopeSet judges them). A refusal is an INSUFFICIENT_SCOPE AppError naming
 * the scope to ask for; the user's own rights are still checked underneath by the services.
 */
export class ScopedBackend implements McpBackend {
  constructor(
    private readonly inner: McpBackend,
    private readonly scopes: ScopeSet,
  ) {}

  async listCollections(page: { offset: number; limit: number }) {
    this.scopes.requireCollections(false);
    const chosen = this.scopes.collections;
    if (!chosen) return this.inner.listCollections(page);
    // Narrowed to chosen collections: those of them that still exist and the user can still read.
    const items = [];
    for (const id of chosen) {
      try {
        items.push(await this.inner.getCollection(id));
      } catch (error) {
        if (!isAppError(error) || (error.code !== ErrorCode.NOT_FOUND && error.code !== ErrorCode.FORBIDDEN)) throw error;
      }
    }
    return { items: items.slice(page.offset, page.offset + page.limit), total: items.length };
  }
  getCollection(collectionId: string) {
    this.scopes.requireCollection(collectionId, false);
    return this.inner.getCollection(collectionId);
  }
  getCollectionStats(collectionId: string) {
    this.scopes.requireCollection(collectionId, false);
    return this.inner.getCollectionStats(collectionId);
  }
  createCollection(name: string) {
    this.scopes.requireNewCollection();
    return this.inner.createCollection(name);
  }
  listFiles(collectionId: string, page: { offset: number; limit: number; status?: 'indexed' }) {
    this.scopes.requireCollection(collectionId, false);
    return this.inner.listFiles(collectionId, page);
  }
  getFile(collectionId: string, fileId: string) {
    this.scopes.requireCollection(collectionId, false);
    return this.inner.getFile(collectionId, fileId);
  }
  fileText(collectionId: string, fileId: string) {
    this.scopes.requireCollection(collectionId, false);
    return this.inner.fileText(collectionId, fileId);
  }
  getPassage(collectionId: string, fileId: string, passageId: string) {
    this.scopes.requireCollection(collectionId, false);
    return this.inner.getPassage(collectionId, fileId, passageId);
  }
  addFile(collectionId: string, file: { name: string; url: string }) {
    this.scopes.requireCollection(collectionId, true);
    return this.inner.addFile(collectionId, file);
  }
  deleteFile(collectionId: string, fileId: string) {
    this.scopes.requireCollection(collectionId, true);
    return this.inner.deleteFile(collectionId, fileId);
  }
  search(collectionId: string, query: Parameters<McpBackend['search']>[1]) {
    this.scopes.requireCollection(collectionId, false);
    return this.inner.search(collectionId, query);
  }
  /** Without the scope to run workflows, none is offered as a tool (the collection tools remain). */
  async listWorkflowTools() {
    if (!this.scopes.canRun) return [];
    return (await this.inner.listWorkflowTools()).filter((tool) => this.scopes.allowsWorkflow(tool.workflowId));
  }
  async startWorkflowTool(name: string, args: Record<string, unknown>) {
    this.scopes.requireWorkflow();
    const tool = (await this.inner.listWorkflowTools()).find((listed) => listed.name === name);
    if (tool) this.scopes.requireWorkflow(tool.workflowId);
    return this.inner.startWorkflowTool(name, args);
  }
  async toolRun(runId: string) {
    this.scopes.requireWorkflow();
    const run = await this.inner.toolRun(runId);
    this.scopes.requireWorkflow(run.workflowId);
    return run;
  }
  async waitForToolRun(runId: string, ms: number) {
    await this.toolRun(runId);
    return this.inner.waitForToolRun(runId, ms);
  }
  async cancelToolRun(runId: string) {
    await this.toolRun(runId);
    return this.inner.cancelToolRun(runId);
  }
  async decideApproval(runId: string, nodeId: string, decision: ApprovalDecision) {
    await this.toolRun(runId);
    return this.inner.decideApproval(runId, nodeId, decision);
  }
}
