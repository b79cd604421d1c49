import { addFileToCollectionTool } from './add-file-to-collection.tool';
import { createCollectionTool } from './create-collection.tool';
import { deleteFileFromCollectionTool } from './delete-file-from-collection.tool';
import { getCollectionStatsTool } from './get-collection-stats.tool';
import { getCollectionTool } from './get-collection.tool';
import { listCollectionFilesTool } from './list-collection-files.tool';
import { listCollectionsTool } from './list-collections.tool';
import { searchCollectionTool } from './search-collection.tool';
import { searchCollectionsTool } from './search-collections.tool';
import { CollectionTool } from './tool-definition';

/** The eight tools of INTERFACE.md 4.2, in the order tools/list presents them, then the search across collections. */
export const COLLECTION_TOOLS: readonly CollectionTool[] = [
  listCollectionsTool,
  getCollectionTool,
  getCollectionStatsTool,
  listCollectionFilesTool,
  addFileToCollectionTool,
  deleteFileFromCollectionTool,
  searchCollectionTool,
  createCollectionTool,
  searchCollectionsTool,
];

export type { CollectionTool, ToolHints } from './tool-definition';
