import { CollectionRef } from './inputs';
import { collectionRecord } from './records';
import { toolArguments } from './tool-arguments';
import { defineTool, READ_ONLY } from './tool-definition';

export const getCollectionTool = defineTool({
  name: 'service_get_collection',
  title: 'Get a collection',
  description:
    'Returns one collection by id: its name, timestamps and your role on it. ' +
    'Fails with NOT_FOUND when the id is wrong or the collection is not shared with you (service_list_collections lists the ids you can use). ' +
    'For file counts and indexing progress call service_get_collection_stats; for its files, service_list_collection_files.',
  input: toolArguments({ ref: CollectionRef }),
  output: collectionRecord,
  annotations: READ_ONLY,
  run: (backend, args) => backend.getCollection(args.collection_id),
});
