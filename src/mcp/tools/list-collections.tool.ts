import { z } from 'zod';
import { COLLECTIONS_PER_CALL } from '../mcp-backend.port';
import { collectionRecord } from './records';
import { toolArguments } from './tool-arguments';
import { defineTool, READ_ONLY } from './tool-definition';

export const listCollectionsTool = defineTool({
  name: 'service_list_collections',
  title: 'List collections',
  description:
    'Lists the document collections you can use (your own and those shared with you), newest first, with your role on each. ' +
    `Takes no arguments and returns at most ${COLLECTIONS_PER_CALL} collections, plus total: how many you can access in all. ` +
    'Next: service_search_collection to search one, service_get_collection_stats to see its files and indexing progress, ' +
    'or service_create_collection when none fits.',
  input: toolArguments({}),
  output: z.object({
    collections: z.array(collectionRecord),
    total: z.number().describe('Number of collections you can access; more than returned when above the limit'),
  }),
  annotations: READ_ONLY,
  async run(backend) {
    const page = await backend.listCollections({ offset: 0, limit: COLLECTIONS_PER_CALL });
    return { collections: page.items, total: page.total };
  },
});
