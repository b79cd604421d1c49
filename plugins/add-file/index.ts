import { CollectionFile, defineNode } from 'workflow-collection-service/sdk';
import { AddFileParameters } from './add-file.parameters';

export { AddFileParameters };

export default defineNode({
  type: 'add-file',
  version: 1,
  displayName: 'Add File',
  description:
    'Adds a file to a collection by URL, with the rights of the user who started the run (editor), as the API does. Ingestion runs in the background: the output file object is `pending`, and the file is searchable once `indexed`.',
  parameters: AddFileParameters,
  defaultRunMode: 'item',
  // Running it again would add the file twice.
  idempotent: false,
  execute(ctx): Promise<CollectionFile> {
    const { collectionId, name, url } = ctx.params;
    return ctx.collections.addFile(collectionId, { name, url });
  },
});
