import { CollectionFile, defineNode } from 'workflow-collection-service/sdk';
import { ListFilesParameters } from './list-files.parameters';

export { ListFilesParameters };

/** Files per execution: read a whole collection by stepping `offset` by this much. */
export const PAGE_SIZE = 20;

export default defineNode({
  type: 'list-files',
  version: 1,
  displayName: 'List Files',
  description: `Lists one page (${PAGE_SIZE} files) of a collection from an offset, with the rights of the user who started the run. Outputs an array of files {id, name, type, size, status, createdAt}, optionally only those in some statuses; an offset past the end gives an empty array.`,
  parameters: ListFilesParameters,
  defaultRunMode: 'item',
  async execute(ctx): Promise<CollectionFile[]> {
    const { collectionId, offset, status } = ctx.params;
    const page = await ctx.collections.listFiles(collectionId, {
      offset: Number(offset),
      limit: PAGE_SIZE,
      ...(status.length ? { status } : {}),
    });
    return page.items;
  },
});
