import { z } from 'zod';
import { ListFilesQueryDto } from '../../collections/files.dto';
import { FILES_PER_CALL } from '../mcp-backend.port';
import { CollectionRef, offsetDescription } from './inputs';
import { fileRecord } from './records';
import { toolArguments } from './tool-arguments';
import { fileUri } from '../resources/resource-uris';
import { defineTool, READ_ONLY } from './tool-definition';

export const listCollectionFilesTool = defineTool({
  name: 'service_list_collection_files',
  title: 'List files of a collection',
  description:
    `Lists the files of a collection: at most ${FILES_PER_CALL} per call, starting at offset (0 for the first page), ` +
    'with total and nextOffset (null when there are no more; otherwise call again with offset = nextOffset). ' +
    'Each file has its id, name, MIME type, size, status and createdAt. Status pending or processing: still being ingested; ' +
    'indexed: searchable with service_search_collection (and its text readable as the resource the result links to); ' +
    'error: ingestion failed, the error field says why.',
  input: toolArguments({
    ref: CollectionRef,
    input: ListFilesQueryDto,
    names: { offset: 'offset' },
    descriptions: { offset: offsetDescription('files') },
  }),
  output: z.object({
    files: z.array(fileRecord),
    total: z.number().describe('Number of files in the collection'),
    offset: z.number(),
    nextOffset: z.number().nullable().describe('Offset of the next page, or null when this page is the last'),
  }),
  annotations: READ_ONLY,
  async run(backend, { collection_id, input: { offset } }) {
    const page = await backend.listFiles(collection_id, { offset, limit: FILES_PER_CALL });
    const next = offset + page.items.length;
    return { files: page.items, total: page.total, offset, nextOffset: page.items.length > 0 && next < page.total ? next : null };
  },
  links: ({ files }, { collection_id }) =>
    files
      .filter((file) => file.status === 'indexed')
      .map((file) => ({
        type: 'resource_link',
        uri: fileUri(collection_id, file.id),
        name: file.name,
        title: file.name,
        mimeType: 'text/plain',
      })),
});
