import { ReadResourceResult, Resource, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { ErrorCode, isAppError } from '../../common/app-error';
import { COLLECTION_ICON } from '../icons';
import type { McpBackend } from '../mcp-backend.port';
import { decodeCursor, encodeCursor } from '../paging';
import { protocolError } from '../protocol-errors';
import { collectionUri, fileUri, MAX_URI_CHARS, parseResourceUri, passageUri, runUri } from './resource-uris';

/** Resources per resources/list page. */
export const RESOURCES_PER_PAGE = 100;
const LIST = 'resources/list';

/**
 * resources/list: the caller's collections (newest first), each followed by its indexed files (oldest
 * first), a page at a time. The cursor is where the next page starts: a collection, and how far into
 * it (0 before the collection itself, n + 1 after its first n files).
 */
export async function listResources(backend: McpBackend, cursor: unknown): Promise<{ resources: Resource[]; nextCursor?: string }> {
  let [collectionOffset, into] = decodeCursor(LIST, cursor, 2);
  const resources: Resource[] = [];
  const more = () => ({ resources, nextCursor: encodeCursor(LIST, collectionOffset, into) });
  for (;;) {
    const { items: collections, total } = await backend.listCollections({ offset: collectionOffset, limit: RESOURCES_PER_PAGE });
    for (const collection of collections) {
      if (resources.length >= RESOURCES_PER_PAGE) return more();
      if (into === 0) {
        resources.push({
          uri: collectionUri(collection.id),
          name: collection.name,
          title: collection.name,
          description: `Collection ${collection.id} (your role: ${collection.role}): its files and passages`,
          mimeType: 'application/json',
          icons: COLLECTION_ICON,
        });
        into = 1;
      }
      const wanted = RESOURCES_PER_PAGE - resources.length;
      if (wanted === 0) return more();
      const files = await backend.listFiles(collection.id, { offset: into - 1, limit: wanted, status: 'indexed' });
      for (const file of files.items) {
        resources.push({
          uri: fileUri(collection.id, file.id),
          name: file.name,
          title: file.name,
          description: `${file.type} in ${collection.name}`,
          mimeType: 'text/plain',
        });
      }
      into += files.items.length;
      // Inside this collection still: the next page goes on from here.
      if (into - 1 < files.total) return more();
      collectionOffset++;
      into = 0;
    }
    if (collections.length === 0 || collectionOffset >= total) return { resources };
  }
}

/** A URI as an error names it: one longer than any this server reads is cut there, not echoed whole (twice: message and data). */
const clipped = (uri: string): string => (uri.length > MAX_URI_CHARS ? `${uri.slice(0, MAX_URI_CHARS)}…` : uri);

/** resources/read: what a URI this server handed out names, checked against the caller's rights like every other door. */
export async function readResource(backend: McpBackend, uri: string, report?: (error: unknown) => void): Promise<ReadResourceResult> {
  const ref = parseResourceUri(uri);
  if (!ref) throw new ResourceNotFoundError(clipped(uri));
  try {
    switch (ref.kind) {
      case 'collection': {
        const [collection, stats] = await Promise.all([
          backend.getCollection(ref.collectionId),
          backend.getCollectionStats(ref.collectionId),
        ]);
        return json(uri, { ...collection, files: stats.files, passages: stats.chunks });
      }
      case 'file': {
        const file = await backend.fileText(ref.collectionId, ref.fileId);
        return { contents: [{ uri, mimeType: 'text/plain', text: file.content }] };
      }
      case 'passage': {
        const passage = await backend.getPassage(ref.collectionId, ref.fileId, ref.passageId);
        return {
          contents: [{ uri: passageUri(ref.collectionId, passage.fileId, passage.id), mimeType: 'text/plain', text: passage.content }],
        };
      }
      case 'run':
        return json(runUri(ref.runId), await backend.toolRun(ref.runId));
    }
  } catch (error) {
    // Unknown and not shared with the caller look alike, as at every door.
    if (isAppError(error) && error.code === ErrorCode.NOT_FOUND) throw new ResourceNotFoundError(uri);
    throw protocolError(error, report);
  }
}

const json = (uri: string, value: unknown): ReadResourceResult => ({
  contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }],
});
