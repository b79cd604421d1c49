import { Injectable } from '@nestjs/common';
import { Principal } from '../../auth/principal';
import { CollectionsService } from '../../collections/collections.service';
import { FilesService } from '../../collections/files.service';
import { SearchService } from '../../collections/search.service';
import { WorkflowToolsService } from '../../workflows/workflow-tools.service';
import type { CollectionsBackend } from '../collections-backend.port';

/**
 * The tools' backend inside the app: the same services the REST controllers call, acting for the
 * principal of the MCP request. One behaviour, two doors.
 */
@Injectable()
export class ServicesBackendFactory {
  constructor(
    private readonly collections: CollectionsService,
    private readonly files: FilesService,
    private readonly searches: SearchService,
    private readonly workflowTools: WorkflowToolsService,
  ) {}

  forPrincipal(principal: Principal): CollectionsBackend {
    const { collections, files, searches, workflowTools } = this;
    return {
      listCollections: (page) => collections.list(principal, page),
      getCollection: (collectionId) => collections.get(principal, collectionId),
      getCollectionStats: (collectionId) => collections.stats(principal, collectionId),
      createCollection: (name) => collections.create(principal, name),
      listFiles: (collectionId, page) => files.list(principal, collectionId, page),
      addFile: (collectionId, file) => files.add(principal, collectionId, file),
      deleteFile: (collectionId, fileId) => files.delete(principal, collectionId, fileId),
      search: (collectionId, query) => searches.search(principal, collectionId, query),
      listWorkflowTools: () => workflowTools.list(principal),
      callWorkflowTool: (name, args) => workflowTools.call(principal, name, args),
    };
  }
}
