import { z } from 'zod';
import { FileRef } from './inputs';
import { toolArguments } from './tool-arguments';
import { defineTool } from './tool-definition';

export const deleteFileFromCollectionTool = defineTool({
  name: 'service_delete_file_from_collection',
  title: 'Delete a file',
  description:
    'Permanently deletes a file from a collection, with its extracted text and search entries; this cannot be undone. ' +
    'Get file ids from service_list_collection_files. Needs the editor or owner role on the collection. ' +
    'Deleting a file that is already gone fails with NOT_FOUND and changes nothing.',
  input: toolArguments({ ref: FileRef }),
  output: z.object({ deleted: z.literal(true), collectionId: z.string(), fileId: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(backend, args) {
    await backend.deleteFile(args.collection_id, args.file_id);
    return { deleted: true as const, collectionId: args.collection_id, fileId: args.file_id };
  },
});
