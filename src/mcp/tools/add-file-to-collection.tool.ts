import { z } from 'zod';
import { collectionIdArg } from './inputs';
import { fileRecord } from './records';
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
  input: z
    .object({
      collection_id: collectionIdArg,
      name: z.string().min(1).max(255).describe('File name to show, with its extension, e.g. annual-report.pdf'),
      url: z.string().url().describe('Public http(s) URL the service downloads the file from, or a data: URL holding a small file'),
    })
    .strict(),
  output: fileRecord,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  run: (backend, args) => backend.addFile(args.collection_id, { name: args.name, url: args.url }),
});
