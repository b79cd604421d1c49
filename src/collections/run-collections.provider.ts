import { Injectable } from '@nestjs/common';
import { Principal } from '../auth/principal';
import { ErrorCode, FieldError, isAppError } from '../common/app-error';
import { NodeCollectionsProvider } from '../engine/node-collections.port';
import { CollectionFile, CollectionsFacade, NodeConfigurationError, NodeUpstreamError } from '../sdk';
import { SearchService } from './search.service';
import { FileStatus } from '../domain/file.model';
import type { Role } from '../domain/membership.model';
import { CollectionsService } from './collections.service';
import { FilesService } from './files.service';

const collectionFile = (
  collectionId: string,
  { id, name, type, size, status, createdAt }: Omit<CollectionFile, 'collectionId'>,
): CollectionFile => ({
  id,
  collectionId,
  name,
  type,
  size,
  status,
  createdAt,
});

/** Failures that come back the same however often a node asks: the node is set up wrongly. */
const CONFIGURATION_CODES = new Set<ErrorCode>([ErrorCode.NOT_FOUND, ErrorCode.FORBIDDEN, ErrorCode.VALIDATION_FAILED, ErrorCode.CONFLICT]);

/** What a facade call does on a collection and the least role it needs there, for the messages of refusals. */
interface Operation {
  doing: string;
  needs: Role;
}
const LIST_FILES: Operation = { doing: "listing a collection's files", needs: 'viewer' };
const GET_FILE_CONTENT: Operation = { doing: "reading a file's content", needs: 'viewer' };
const SEARCH: Operation = { doing: 'searching a collection', needs: 'viewer' };
const ADD_FILE: Operation = { doing: 'adding a file to a collection', needs: 'editor' };

/**
 * `ctx.collections` of workflow nodes: the collections, files and search services acting as the user who started the run,
 * so a node sees exactly what that user may see through the API, checked on every call by the same
 * access policy. Service errors become the node error types the executor's retry rules know.
 */
@Injectable()
export class RunCollectionsProvider extends NodeCollectionsProvider {
  constructor(
    private readonly collections: CollectionsService,
    private readonly files: FilesService,
    private readonly searches: SearchService,
  ) {
    super();
  }

  forUser(userId: string): CollectionsFacade {
    // A run carries no API key; the role check reads only the user.
    const principal: Principal = { userId, keyId: null, isAdmin: false };
    return {
      listCollections: async (page) => {
        try {
          // The API's view of a collection is the node's CollectionSummary.
          return await this.collections.list(principal, page);
        } catch (error) {
          // Needs no role: it lists only the collections the user holds one on.
          throw nodeError(error, userId, {});
        }
      },
      listFiles: async (collectionId, page) => {
        try {
          const result = await this.files.list(
            principal,
            collectionId,
            { offset: page.offset, limit: page.limit },
            (page.status ?? []) as FileStatus[],
          );
          return { items: result.items.map((file) => collectionFile(collectionId, file)), total: result.total };
        } catch (error) {
          throw nodeError(error, userId, { collectionId }, LIST_FILES);
        }
      },
      getFileContent: async (collectionId, fileId) => {
        try {
          return await this.files.content(principal, collectionId, fileId);
        } catch (error) {
          throw nodeError(error, userId, { collectionId, fileId }, GET_FILE_CONTENT);
        }
      },
      search: async (collectionId, query) => {
        try {
          const { result, rerank } = await this.searches.search(principal, collectionId, query);
          return {
            items: result.map(({ id, content, distance, fileId, fileName, page, rerankScore }) => ({
              id,
              content,
              distance,
              fileId,
              fileName,
              page: page ?? null,
              ...(rerankScore !== undefined ? { rerankScore } : {}),
            })),
            ...(rerank ? { rerank } : {}),
          };
        } catch (error) {
          throw nodeError(error, userId, { collectionId }, SEARCH);
        }
      },
      addFile: async (collectionId, file) => {
        try {
          return collectionFile(collectionId, await this.files.add(principal, collectionId, file));
        } catch (error) {
          throw nodeError(error, userId, { collectionId }, ADD_FILE);
        }
      },
    };
  }
}

function nodeError(error: unknown, userId: string, about: Record<string, string>, operation?: Operation): Error {
  if (!isAppError(error)) {
    return new NodeUpstreamError(`The collection store failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      details: about,
    });
  }
  const details = { ...about, code: error.code, ...(typeof error.details === 'object' && error.details !== null ? error.details : {}) };
  if (!CONFIGURATION_CODES.has(error.code)) {
    return new NodeUpstreamError(error.message, {
      cause: error,
      details,
      retryable: error.retryable || error.code === ErrorCode.UNAVAILABLE,
    });
  }
  let message = error.message;
  // "Not found" also stands for "no role", so that existence is not revealed: say whose rights were used.
  if (operation && (error.code === ErrorCode.NOT_FOUND || error.code === ErrorCode.FORBIDDEN)) {
    message += ` (the run acts as user ${userId}, who started it; ${operation.doing} needs at least the ${operation.needs} role)`;
  }
  // The node's author reads the message in the run record: name the fields, not only "validation failed".
  const fields = error.code === ErrorCode.VALIDATION_FAILED ? (error.details as { fields?: FieldError[] } | undefined)?.fields : undefined;
  if (fields?.length)
    message += `: ${fields.map(({ field, reason }) => (reason.startsWith(`${field} `) ? reason : `${field} ${reason}`)).join('; ')}`;
  return new NodeConfigurationError(message, { cause: error, details });
}
