import { Injectable } from '@nestjs/common';
import { Principal } from '../../auth/principal';
import { CollectionsService } from '../../collections/collections.service';
import { FilesService } from '../../collections/files.service';
import { rerankInput, SearchInput, SearchService, SearchTarget } from '../../collections/search.service';
import { ScopeSet } from '../../oauth/oauth-scopes';
import { WorkflowToolsService } from '../../workflows/workflow-tools.service';
import type { ApprovalDecision, McpBackend, SearchQuery } from '../mcp-backend.port';
import { ScopedBackend } from './scoped-backend';

interface Services {
  collections: CollectionsService;
  files: FilesService;
  searches: SearchService;
  workflowTools: WorkflowToolsService;
}

/** The services acting for one principal: made for every MCP request, so one small object rather than a closure per method. */
class ServicesBackend implements McpBackend {
  constructor(
    private readonly principal: Principal,
    private readonly services: Services,
  ) {}

  listCollections(page: { offset: number; limit: number }) {
    return this.services.collections.list(this.principal, page);
  }
  getCollection(collectionId: string) {
    return this.services.collections.get(this.principal, collectionId);
  }
  getCollectionStats(collectionId: string) {
    return this.services.collections.stats(this.principal, collectionId);
  }
  createCollection(name: string) {
    return this.services.collections.create(this.principal, name);
  }
  listFiles(collectionId: string, { offset, limit, status }: { offset: number; limit: number; status?: 'indexed' }) {
    return this.services.files.list(this.principal, collectionId, { offset, limit }, status ? [status] : []);
  }
  getFile(collectionId: string, fileId: string) {
    return this.services.files.get(this.principal, collectionId, fileId);
  }
  fileText(collectionId: string, fileId: string) {
    return this.services.files.content(this.principal, collectionId, fileId);
  }
  getPassage(collectionId: string, fileId: string, passageId: string) {
    return this.services.files.passage(this.principal, collectionId, fileId, passageId);
  }
  addFile(collectionId: string, file: { name: string; url: string }) {
    return this.services.files.add(this.principal, collectionId, file);
  }
  deleteFile(collectionId: string, fileId: string) {
    return this.services.files.delete(this.principal, collectionId, fileId);
  }
  search(collectionId: string, query: SearchQuery) {
    return this.services.searches.search(this.principal, collectionId, serviceQuery(query));
  }
  searchMany(target: SearchTarget, query: SearchQuery) {
    return this.services.searches.searchMany(this.principal, target, serviceQuery(query));
  }
  listWorkflowTools() {
    return this.services.workflowTools.list(this.principal);
  }
  startWorkflowTool(name: string, args: Record<string, unknown>) {
    return this.services.workflowTools.start(this.principal, name, args);
  }
  toolRun(runId: string) {
    return this.services.workflowTools.run(this.principal, runId);
  }
  waitForToolRun(runId: string, ms: number) {
    return this.services.workflowTools.waitForRun(this.principal, runId, ms);
  }
  cancelToolRun(runId: string) {
    return this.services.workflowTools.cancelRun(this.principal, runId);
  }
  async decideApproval(runId: string, nodeId: string, decision: ApprovalDecision) {
    await this.services.workflowTools.decide(this.principal, runId, nodeId, decision);
  }
}

/**
 * The MCP server's backend inside the app: the same services the REST controllers call, acting for
 * the principal of the MCP request. One behaviour, two doors.
 */
@Injectable()
export class ServicesBackendFactory {
  private readonly services: Services;

  constructor(collections: CollectionsService, files: FilesService, searches: SearchService, workflowTools: WorkflowToolsService) {
    this.services = { collections, files, searches, workflowTools };
  }

  /** The services acting for `principal`, limited to `scopes` when its credential has them (an OAuth token). */
  forPrincipal(principal: Principal, scopes?: readonly string[]): McpBackend {
    const backend = new ServicesBackend(principal, this.services);
    return scopes ? new ScopedBackend(backend, new ScopeSet(scopes)) : backend;
  }
}

/** The tools' search query in the service's spelling (the rerank option as REST spells it, converted). */
function serviceQuery({ rerank, ...query }: SearchQuery): SearchInput {
  return { ...query, ...(rerank ? { rerank: rerankInput(rerank) } : {}) };
}
