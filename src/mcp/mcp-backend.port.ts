import type { CollectionRecord, CollectionStatsRecord, FileRecord, SearchHit } from './tools/records';

/** Largest page of files one tool call returns (INTERFACE.md 8). */
export const FILES_PER_CALL = 100;
/** Most search results one tool call returns (INTERFACE.md 8). */
export const RESULTS_PER_SEARCH = 10;
/** service_list_collections takes no offset; it returns the newest collections up to this many. */
export const COLLECTIONS_PER_CALL = 100;

/** A workflow offered as a tool (its trigger is an MCP trigger), as the caller sees it. */
export interface WorkflowToolRecord {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  workflowId: string;
}

/** A workflow tool call: the run's answer once it finished, or `running` when the time limit came first. */
export interface WorkflowToolCallRecord {
  runId: string;
  status: string;
  output?: unknown;
  error?: { code: string; message: string } | null;
}

/**
 * What the MCP tools need from the service, acting as one caller: the eight collection tools, and
 * the workflows the caller may call as tools. Two implementations: the services themselves inside
 * the app (remote transports) and the REST API (the stdio program), so both doors serve the same
 * tools. Failures are AppErrors.
 */
export interface CollectionsBackend {
  listCollections(page: { offset: number; limit: number }): Promise<{ items: CollectionRecord[]; total: number }>;
  getCollection(collectionId: string): Promise<CollectionRecord>;
  getCollectionStats(collectionId: string): Promise<CollectionStatsRecord>;
  createCollection(name: string): Promise<CollectionRecord>;
  listFiles(collectionId: string, page: { offset: number; limit: number }): Promise<{ items: FileRecord[]; total: number }>;
  addFile(collectionId: string, file: { name: string; url: string }): Promise<FileRecord>;
  deleteFile(collectionId: string, fileId: string): Promise<void>;
  search(collectionId: string, query: { text: string; topK: number; offset: number }): Promise<{ result: SearchHit[] }>;
  listWorkflowTools(): Promise<WorkflowToolRecord[]>;
  /** @throws AppError NOT_FOUND (no such tool for this caller), VALIDATION_FAILED (arguments refused by its schema) */
  callWorkflowTool(name: string, args: Record<string, unknown>): Promise<WorkflowToolCallRecord>;
}
