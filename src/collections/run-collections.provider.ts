import { Injectable } from '@nestjs/common';
import { Principal } from '../auth/principal';
import { ErrorCode, isAppError } from '../common/app-error';
import { NodeCollectionsProvider } from '../engine/collections-provider';
import { CollectionFile, CollectionsFacade, NodeConfigurationError, NodeUpstreamError } from '../sdk';
import { SearchService } from '../search/search.service';
import { CollectionStore } from '../storage/ports/collection-store.port';
import { FileStatus } from '../storage/ports/file-store.port';
import { FilesService } from './files.service';

const collectionFile = ({ id, name, type, size, status, createdAt }: CollectionFile): CollectionFile => ({ id, name, type, size, status, createdAt });

/** Failures that come back the same however often a node asks: the node is set up wrongly. */
const CONFIGURATION_CODES = new Set<ErrorCode>([ErrorCode.NOT_FOUND, ErrorCode.FORBIDDEN, ErrorCode.VALIDATION_FAILED, ErrorCode.CONFLICT]);

/**
 * `ctx.collections` of workflow nodes: the files service acting as the user who started the run,
 * so a node sees exactly what that user may see through the API, checked on every call by the same
 * access policy. Service errors become the node error types the executor's retry rules know.
 */
@Injectable()
export class RunCollectionsProvider extends NodeCollectionsProvider {
  constructor(
    private readonly files: FilesService,
    private readonly searches: SearchService,
    private readonly collections: CollectionStore,
  ) {
    super();
  }

  forUser(userId: string): CollectionsFacade {
    // A run carries no API key; the role check reads only the user.
    const principal: Principal = { userId, keyId: null, isAdmin: false };
    return {
      listCollections: async (page) => {
        if (!Number.isInteger(page.offset) || page.offset < 0 || !Number.isInteger(page.limit) || page.limit < 1 || page.limit > 100) {
          throw new NodeConfigurationError('listCollections needs a whole offset >= 0 and a limit from 1 to 100', { details: { offset: page.offset, limit: page.limit } });
        }
        try {
          // Memberships are the rights: the store lists only collections the user holds a role on.
          const result = await this.collections.listVisible(userId, { offset: page.offset, limit: page.limit });
          return {
            items: result.items.map((c) => ({ id: c.id, name: c.name, role: c.role, createdAt: c.createdAt.toISOString(), updatedAt: c.updatedAt.toISOString() })),
            total: result.total,
          };
        } catch (error) {
          throw nodeError(error, userId, {});
        }
      },
      listFiles: async (collectionId, page) => {
        try {
          const result = await this.files.list(principal, collectionId, { offset: page.offset, limit: page.limit }, (page.status ?? []) as FileStatus[]);
          return { items: result.items.map(collectionFile), total: result.total };
        } catch (error) {
          throw nodeError(error, userId, { collectionId });
        }
      },
      getFileContent: async (collectionId, fileId) => {
        try {
          return await this.files.content(principal, collectionId, fileId);
        } catch (error) {
          throw nodeError(error, userId, { collectionId, fileId });
        }
      },
      search: async (collectionId, query) => {
        try {
          const { result } = await this.searches.search(principal, collectionId, query);
          return { items: result.map(({ id, content, distance, fileId, fileName, page }) => ({ id, content, distance, fileId, fileName, page: page ?? null })) };
        } catch (error) {
          throw nodeError(error, userId, { collectionId });
        }
      },
      addFile: async (collectionId, file) => {
        try {
          return collectionFile(await this.files.add(principal, collectionId, file));
        } catch (error) {
          throw nodeError(error, userId, { collectionId });
        }
      },
    };
  }
}

function nodeError(error: unknown, userId: string, about: Record<string, string>): Error {
  if (!isAppError(error)) {
    return new NodeUpstreamError(`The collection store failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error, details: about });
  }
  const details = { ...about, code: error.code, ...(typeof error.details === 'object' && error.details !== null ? error.details : {}) };
  if (!CONFIGURATION_CODES.has(error.code)) {
    return new NodeUpstreamError(error.message, { cause: error, details, retryable: error.retryable || error.code === ErrorCode.UNAVAILABLE });
  }
  // "Not found" also stands for "no role", so that existence is not revealed: say whose rights were used.
  const message =
    error.code === ErrorCode.NOT_FOUND || error.code === ErrorCode.FORBIDDEN
      ? `${error.message} (the run acts as user ${userId}, who started it; reading a collection needs at least the viewer role)`
      : error.message;
  return new NodeConfigurationError(message, { cause: error, details });
}
