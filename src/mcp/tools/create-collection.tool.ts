import { z } from 'zod';
import { collectionRecord } from './records';
import { defineTool } from './tool-definition';

export const createCollectionTool = defineTool({
  name: 'service_create_collection',
  title: 'Create a collection',
  description:
    'Creates an empty collection and makes you its owner; returns it with its id. ' +
    'Names need not be unique, so each call creates another collection: check service_list_collections first to avoid duplicates. ' +
    'Next: add files with service_add_file_to_collection, then search them with service_search_collection once they are indexed.',
  input: z
    .object({ name: z.string().trim().min(1).max(200).describe('Name of the collection, 1 to 200 characters') })
    .strict(),
  output: collectionRecord,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: (backend, args) => backend.createCollection(args.name),
});
