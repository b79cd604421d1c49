import { fileUri, passageUri } from '../resources/resource-uris';
import type { SearchHit } from './records';
import type { ResourceLinkBlock } from './tool-definition';

/** How a model is told about the optional `filter` argument of both search tools. */
export const FILTER_HELP =
  'Optional filter: only passages of files it keeps, e.g. {"field":"metadata.year","gte":2020}, ' +
  '{"field":"type","in":["application/pdf"]}, {"field":"metadata.tags","eq":"contract"}, {"field":"title","exists":true}, ' +
  'combined with {"and":[...]}, {"or":[...]}, {"not":{...}}; fields: id, name, type, size, createdAt, pages, title, author, metadata.<key>.';

/** A search's passages and their files as resource links a client can follow and cite. */
export function hitLinks(result: readonly (SearchHit & { collectionId: string })[]): ResourceLinkBlock[] {
  const links: ResourceLinkBlock[] = result.map((hit) => ({
    type: 'resource_link',
    uri: passageUri(hit.collectionId, hit.fileId, hit.id),
    name: `${hit.fileName} #${hit.chunkIndex + 1}`,
    title: `${hit.fileName}, passage ${hit.chunkIndex + 1}${hit.page !== undefined ? ` (page ${hit.page})` : ''}`,
    description: excerpt(hit.content),
    mimeType: 'text/plain',
  }));
  const files = new Map(result.map((hit) => [hit.fileId, hit]));
  for (const [fileId, { collectionId, fileName }] of files)
    links.push({ type: 'resource_link', uri: fileUri(collectionId, fileId), name: fileName, title: fileName, mimeType: 'text/plain' });
  return links;
}

const EXCERPT_CHARS = 160;
const excerpt = (text: string) => (text.length <= EXCERPT_CHARS ? text : `${text.slice(0, EXCERPT_CHARS - 1)}…`);
