import { CreateCollectionDto } from '../../collections/collections.dto';
import { collectionRecord } from './records';
import { toolArguments } from './tool-arguments';
import { defineTool } from './tool-definition';

export const createCollectionTool = defineTool({
  name: 'service_create_collection',
  title: 'Create a collection',
  description:
    'Creates an empty collection and makes you its owner; returns it with its id. ' +
    'Names need not be unique, so each call creates another collection: check service_list_collections first to avoid duplicates. ' +
    'Next: add files with service_add_file_to_collection, then search them with service_search_collection once they are indexed.',
  input: toolArguments({ input: CreateCollectionDto, names: { name: 'name' } }),
  output: collectionRecord,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: (backend, { input }) => backend.createCollection(input.name),
});
