import { CollectionPassage, defineNode } from 'workflow-collection-service/sdk';
import { SearchCollectionParameters } from './search-collection.parameters';

export { SearchCollectionParameters };

export default defineNode({
  type: 'search-collection',
  version: 1,
  displayName: 'Search Collection',
  description:
    'Semantic search in a collection with the rights of the user who started the run, optionally only in the files a filter on their type and metadata keeps. Outputs the passages found, nearest first: [{id, content, distance, fileId, fileName, page}].',
  parameters: SearchCollectionParameters,
  defaultRunMode: 'input',
  async execute(ctx): Promise<CollectionPassage[]> {
    const { collectionId, query, topK, offset, mode, filter } = ctx.params;
    return (await ctx.collections.search(collectionId, { text: query, topK, offset, mode, ...(filter ? { filter } : {}) })).items;
  },
});
