import { CollectionRef } from './inputs';
import { collectionStats } from './records';
import { toolArguments } from './tool-arguments';
import { defineTool, READ_ONLY } from './tool-definition';

export const getCollectionStatsTool = defineTool({
  name: 'service_get_collection_stats',
  title: 'Collection statistics',
  description:
    'Returns statistics of one collection: the number of files by ingestion status (pending, processing, indexed, error), ' +
    'their total size in bytes, and the number of searchable passages and extracted characters. ' +
    'Use it to check whether files added with service_add_file_to_collection have finished: ' +
    'service_search_collection only sees files whose status is indexed.',
  input: toolArguments({ ref: CollectionRef }),
  output: collectionStats,
  annotations: READ_ONLY,
  run: (backend, args) => backend.getCollectionStats(args.collection_id),
});
