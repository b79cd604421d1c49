/**
 * The icons tools, prompts and the server carry (MCP 2025-11-25 `icons`): small SVGs as data URIs,
 * so a client shows them without fetching anything from the service.
 */
export interface McpIcon {
  src: string;
  mimeType: string;
  sizes: string[];
}

const svg = (body: string): McpIcon[] => [
  {
    src: `data:image/svg+xml;base64,${Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#3b5bdb" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`,
    ).toString('base64')}`,
    mimeType: 'image/svg+xml',
    sizes: ['any'],
  },
];

/** A stack of documents: the service, its collections and their files. */
export const COLLECTION_ICON = svg(
  '<path d="M7 3h8l4 4v12a2 2 0 0 1-2 2H7a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z"/><path d="M15 3v4h4"/><path d="M8.5 12h7M8.5 15.5h7"/>',
);
/** A magnifier over a page: searching a collection. */
export const SEARCH_ICON = svg('<circle cx="10.5" cy="10.5" r="6"/><path d="M15 15l5.5 5.5"/><path d="M8 10.5h5"/>');
/** Three connected nodes: a workflow run as a tool. */
export const WORKFLOW_ICON = svg(
  '<rect x="3" y="4" width="6" height="5" rx="1"/><rect x="15" y="4" width="6" height="5" rx="1"/><rect x="9" y="15" width="6" height="5" rx="1"/><path d="M9 6.5h6M6 9v3.5h6V15M18 9v3.5h-6"/>',
);
