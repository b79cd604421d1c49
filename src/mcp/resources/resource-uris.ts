/**
 * The URIs of what the MCP server offers as resources: collections, their files (the extracted
 * text), the passages a search hit points to, and the runs a workflow tool call started. The ids
 * are the service's own (letters, digits, `_`), so a URI is the ids and nothing to escape.
 */

const ID = '([A-Za-z0-9_-]{1,200})';
const COLLECTION = new RegExp(`^collections://${ID}$`);
const FILE = new RegExp(`^collections://${ID}/files/${ID}$`);
const PASSAGE = new RegExp(`^collections://${ID}/files/${ID}/passages/${ID}$`);
const RUN = new RegExp(`^runs://${ID}$`);

export const collectionUri = (collectionId: string) => `collections://${collectionId}`;
export const fileUri = (collectionId: string, fileId: string) => `collections://${collectionId}/files/${fileId}`;
export const passageUri = (collectionId: string, fileId: string, passageId: string) =>
  `collections://${collectionId}/files/${fileId}/passages/${passageId}`;
export const runUri = (runId: string) => `runs://${runId}`;

export type ResourceRef =
  | { kind: 'collection'; collectionId: string }
  | { kind: 'file'; collectionId: string; fileId: string }
  | { kind: 'passage'; collectionId: string; fileId: string; passageId: string }
  | { kind: 'run'; runId: string };

/** The longest URI this server hands out and reads, with room to spare. */
export const MAX_URI_CHARS = 1000;

/** What a URI names, or undefined for one this server never hands out. */
export function parseResourceUri(uri: string): ResourceRef | undefined {
  if (uri.length > MAX_URI_CHARS) return undefined;
  let match = COLLECTION.exec(uri);
  if (match) return { kind: 'collection', collectionId: match[1] };
  match = FILE.exec(uri);
  if (match) return { kind: 'file', collectionId: match[1], fileId: match[2] };
  match = PASSAGE.exec(uri);
  if (match) return { kind: 'passage', collectionId: match[1], fileId: match[2], passageId: match[3] };
  match = RUN.exec(uri);
  if (match) return { kind: 'run', runId: match[1] };
  return undefined;
}

/** resources/templates/list: the same URIs as RFC 6570 templates. */
export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'collections://{collection_id}',
    name: 'collection',
    title: 'Collection',
    description: 'A document collection: its name, your role on it and how many files and passages it holds (JSON)',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'collections://{collection_id}/files/{file_id}',
    name: 'file',
    title: 'File text',
    description: 'The text extracted from an indexed file of a collection, passage after passage',
    mimeType: 'text/plain',
  },
  {
    uriTemplate: 'collections://{collection_id}/files/{file_id}/passages/{passage_id}',
    name: 'passage',
    title: 'Passage',
    description: 'One passage of a file, as service_search_collection finds it: cite it by this URI',
    mimeType: 'text/plain',
  },
  {
    uriTemplate: 'runs://{run_id}',
    name: 'run',
    title: 'Workflow run',
    description: 'A run you started by calling a workflow tool: where it stands, its output once it ended, the approval it waits at (JSON)',
    mimeType: 'application/json',
  },
];
