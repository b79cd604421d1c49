import { AddFileDto } from '../../collections/files.dto';
import { CollectionRef } from './inputs';
import { fileRecord } from './records';
import { toolArguments } from './tool-arguments';
import { defineTool } from './tool-definition';

export const addFileToCollectionTool = defineTool({
  name: 'service_add_file_to_collection',
  title: 'Add a file by URL',
  description:
    'Adds a file to a collection by downloading it from a public http(s) URL (a data: URL also works for small files). ' +
    'name is the file name to show, with its extension ' +
    '(e.g. report.pdf). Supported formats: PDF, DOCX, XLSX, PPTX, CSV, HTML, Markdown, JSON and plain text. ' +
    'Returns the new file at once with status pending: download, text extraction and indexing continue in the background ' +
    '(seconds to minutes). The file is searchable with service_search_collection only once its status is indexed; ' +
    'check with service_list_collection_files or service_get_collection_stats. Each call adds a new file, even for the same URL. ' +
    'Needs the editor or owner role on the collection.',
  input: toolArguments({
    ref: CollectionRef,
    input: AddFileDto,
    names: { name: 'name', url: 'url' },
    descriptions: {
      name: 'File name to show, with its extension, e.g. annual-report.pdf',
      url: 'Public http(s) URL the service downloads the file from, or a data: URL holding a small file',
    },
  }),
  output: fileRecord,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  run: (backend, { collection_id, input }) => backend.addFile(collection_id, { name: input.name, url: input.url }),
});
