import { CollectionFileContent, defineNode, isNodeError, NodeConfigurationError } from 'workflow-collection-service/sdk';
import { GetFileContentsParameters } from './get-file-contents.parameters';

export { GetFileContentsParameters };

/** Files read at once: enough to hide the store's latency, few enough not to crowd other runs. */
const CONCURRENT_READS = 4;
/** Nesting of arrays taken apart when looking for files (List Files in item mode gives two levels). */
const MAX_DEPTH = 8;

export default defineNode({
  type: 'get-file-contents',
  version: 1,
  displayName: 'Get File Contents',
  description:
    "Reads the extracted text of files, with the rights of the user the run acts as. Takes file ids or file objects, such as List Files' output as it comes (one array per page), and outputs one array [{id, name, type, content}] in the same order. The collection is the collectionId parameter, else the one each file object names. With skipUnavailable, files that cannot be read are left out.",
  parameters: GetFileContentsParameters,
  defaultRunMode: 'input',
  async execute(ctx): Promise<CollectionFileContent[]> {
    const { skipFilesWithoutText, skipUnavailable } = ctx.params;
    const files = fileRefsIn(ctx.params.files ?? (ctx.runMode === 'input' ? ctx.input : ctx.item), ctx.params.collectionId);
    const contents = new Array<CollectionFileContent | null>(files.length);
    let next = 0;
    let failed = false;
    const reader = async () => {
      while (next < files.length && !failed && !ctx.signal.aborted) {
        const index = next++;
        try {
          contents[index] = await ctx.collections.getFileContent(files[index].collectionId, files[index].id);
        } catch (error) {
          const skip =
            (skipFilesWithoutText || skipUnavailable) && hasNoText(error)
              ? 'it has no extracted text'
              : skipUnavailable && isGone(error)
                ? 'it is gone'
                : null;
          if (!skip) {
            failed = true;
            throw error;
          }
          ctx.logger.info(`file left out: ${skip}`, {
            fileId: files[index].id,
            status: (error as NodeConfigurationError).details?.status ?? null,
          });
          contents[index] = null;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENT_READS, files.length) }, reader));
    return contents.filter((content): content is CollectionFileContent => content !== null);
  },
});

/**
 * The files to read, in order, from ids, objects with an `id`, and arrays of those at any nesting,
 * each in `collectionId` when given, else in the collection its object names. An `{error}` record,
 * which Continue on Error leaves in an upstream node's output in place of a failed item, holds no
 * file and is passed over: the failure is already in that node's step.
 */
export function fileRefsIn(value: unknown, collectionId?: string, path = 'input', depth = 0): { id: string; collectionId: string }[] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string' && value.trim()) return [{ id: value.trim(), collectionId: collectionOf(collectionId, undefined, path) }];
  if (Array.isArray(value) && depth < MAX_DEPTH)
    return value.flatMap((entry, i) => fileRefsIn(entry, collectionId, `${path}[${i}]`, depth + 1));
  if (typeof value === 'object' && !Array.isArray(value)) {
    const { id, error, collectionId: own } = value as { id?: unknown; error?: unknown; collectionId?: unknown };
    if (typeof id === 'string' && id.trim()) return [{ id: id.trim(), collectionId: collectionOf(collectionId, own, path) }];
    if (id === undefined && error !== undefined) return [];
  }
  const shown = JSON.stringify(value) ?? String(value);
  throw new NodeConfigurationError(
    `${path} is not a file: expected a file id or an object with an "id", got ${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown}`,
    {
      details: { path },
    },
  );
}

function collectionOf(given: string | undefined, own: unknown, path: string): string {
  if (given) return given;
  if (typeof own === 'string' && own.trim()) return own.trim();
  throw new NodeConfigurationError(
    `${path} names no collection: set the collectionId parameter, or pass file objects that carry their collectionId (as List Files' output does)`,
    {
      details: { path, field: 'collectionId' },
    },
  );
}

/** Not found: deleted since it was listed (or never in the collection). */
function isGone(error: unknown): boolean {
  return isNodeError(error) && error.kind === 'configuration' && error.details?.code === 'NOT_FOUND';
}

function hasNoText(error: unknown): boolean {
  return isNodeError(error) && error.kind === 'configuration' && typeof error.details?.status === 'string';
}
