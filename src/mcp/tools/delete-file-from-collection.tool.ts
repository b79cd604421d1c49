import { z } from 'zod';
import { collectionIdArg } from './inputs';
import { defineTool } from './tool-definition';

export const deleteFileFromCollectionTool = defineTool({
  name: 'service_delete_file_from_collection',
  title: 'Delete a file',
  description:
    'Permanently deletes a file from a collection, with its extracted text and search entries; this cannot be undone. ' +
    'Get file ids from service_list_collection_files. Needs the editor or owner role on the collection. ' +
    'Deleting a file that is already gone fails with NOT_FOUND and changes nothing.',
  input: z
    .object({
      collection_id: collectionIdArg,
      file_id: z.string().min(1).max(200).describe('Id of the file (starts with fle_), from service_list_collection_files'),
    })
    .strict(),
  output: z.object({ deleted: z.literal(true), collectionId: z.string(), fileId: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(backend, args) {
    await backend.deleteFile(args.collection_id, args.file_id);
    return { deleted: true as const, collectionId: args.collection_id, fileId: args.file_id };
  },
});
