import { Injectable } from '@nestjs/common';
import { Principal } from '../../auth/principal';
import { CollectionsService } from '../../collections/collections.service';
import { FilesService } from '../../collections/files.service';
import { SearchService } from '../../collections/search.service';
import { WorkflowToolsService } from '../../workflows/workflow-tools.service';
import type { McpBackend } from '../mcp-backend.port';

/**
 * The MCP server's backend inside the app: the same services the REST controllers call, acting for
 * the principal of the MCP request. One behaviour, two doors.
 */
@Injectable()
export class ServicesBackendFactory {
  constructor(
    private readonly collections: CollectionsService,
    private readonly files: FilesService,
    private readonly searches: SearchService,
    private readonly workflowTools: WorkflowToolsService,
  ) {}

  forPrincipal(principal: Principal): McpBackend {
    const { collections, files, searches, workflowTools } = this;
    return {
      listCollections: (page) => collections.list(principal, page),
      getCollection: (collectionId) => collections.get(principal, collectionId),
      getCollectionStats: (collectionId) => collections.stats(principal, collectionId),
      createCollection: (name) => collections.create(principal, name),
      listFiles: (collectionId, { offset, limit, status }) =>
        files.list(principal, collectionId, { offset, limit }, status ? [status] : []),
      getFile: (collectionId, fileId) => files.get(principal, collectionId, fileId),
      fileText: (collectionId, fileId) => files.content(principal, collectionId, fileId),
      getPassage: (collectionId, fileId, passageId) => files.passage(principal, collectionId, fileId, passageId),
      addFile: (collectionId, file) => files.add(principal, collectionId, file),
      deleteFile: (collectionId, fileId) => files.delete(principal, collectionId, fileId),
      search: (collectionId, query) => searches.search(principal, collectionId, query),
      listWorkflowTools: () => workflowTools.list(principal),
      startWorkflowTool: (name, args) => workflowTools.start(principal, name, args),
      toolRun: (runId) => workflowTools.run(principal, runId),
      waitForToolRun: (runId, ms) => workflowTools.waitForRun(principal, runId, ms),
      cancelToolRun: (runId) => workflowTools.cancelRun(principal, runId),
      decideApproval: async (runId, nodeId, decision) => void (await workflowTools.decide(principal, runId, nodeId, decision)),
    };
  }
}
