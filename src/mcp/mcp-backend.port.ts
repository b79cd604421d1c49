import type { PassageView as PassageRecord } from '../collections/files.service';
import type { RerankDto } from '../collections/search.dto';
import type { RerankOutcome } from '../collections/search.service';
import type { DecisionRequest as ApprovalDecision, WaitingApproval as ToolRunApproval } from '../runs/approvals.service';
import type { ToolRunView as ToolRunRecord } from '../workflows/workflow-tools.service';
import type { CollectionRecord, CollectionStatsRecord, FileRecord, SearchHit } from './tools/records';

/** Largest page of files one tool call returns (INTERFACE.md 8). */
export const FILES_PER_CALL = 100;
/** Most search results one tool call returns (INTERFACE.md 8). */
export const RESULTS_PER_SEARCH = 10;
/** service_list_collections takes no offset; it returns the newest collections up to this many. */
export const COLLECTIONS_PER_CALL = 100;

export interface SearchQuery {
  text: string;
  topK: number;
  offset: number;
  filter?: Record<string, unknown>;
  rerank?: RerankDto;
}

/** A workflow offered as a tool (its trigger is an MCP trigger), as the caller sees it. */
export interface WorkflowToolRecord {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  workflowId: string;
}

/**
 * The records the MCP server reads are the services' own views, as they are over REST too (the
 * stdio program's backend): types only, so the program imports nothing of the services.
 */
export type { ToolRunRecord, ToolRunApproval, PassageRecord, ApprovalDecision };

/**
 * What the MCP server needs from the service, acting as one caller: the eight collection tools,
 * the collections, files and passages as resources, and the workflows the caller may call as tools
 * with the runs they start. Two implementations: the services themselves inside the app (remote
 * transports) and the REST API (the stdio program), so both doors serve the same server. Failures
 * are AppErrors.
 */
export interface McpBackend {
  listCollections(page: { offset: number; limit: number }): Promise<{ items: CollectionRecord[]; total: number }>;
  getCollection(collectionId: string): Promise<CollectionRecord>;
  getCollectionStats(collectionId: string): Promise<CollectionStatsRecord>;
  createCollection(name: string): Promise<CollectionRecord>;
  listFiles(
    collectionId: string,
    page: { offset: number; limit: number; status?: 'indexed' },
  ): Promise<{ items: FileRecord[]; total: number }>;
  getFile(collectionId: string, fileId: string): Promise<FileRecord>;
  /** The extracted text of an indexed file. @throws AppError CONFLICT while it is not indexed */
  fileText(collectionId: string, fileId: string): Promise<{ name: string; type: string; content: string }>;
  getPassage(collectionId: string, fileId: string, passageId: string): Promise<PassageRecord>;
  addFile(collectionId: string, file: { name: string; url: string }): Promise<FileRecord>;
  deleteFile(collectionId: string, fileId: string): Promise<void>;
  /** `filter` is the search filter as the caller wrote it, checked by the service; `rerank` as the REST body spells it. */
  search(collectionId: string, query: SearchQuery): Promise<{ result: SearchHit[]; rerank?: RerankOutcome }>;
  /** One search across the named collections, or all the caller can read; every hit names its collection. */
  searchMany(
    target: { collectionIds: readonly string[] } | { all: true },
    query: SearchQuery,
  ): Promise<{ result: (SearchHit & { collectionId: string })[]; rerank?: RerankOutcome }>;
  listWorkflowTools(): Promise<WorkflowToolRecord[]>;
  /**
   * Checks the arguments against the tool's schema and starts its run, answering at once.
   * @throws AppError NOT_FOUND (no such tool for this caller), VALIDATION_FAILED (arguments refused, each named)
   */
  startWorkflowTool(name: string, args: Record<string, unknown>): Promise<ToolRunRecord>;
  /** A run the caller started through a workflow tool. @throws AppError NOT_FOUND for any other run */
  toolRun(runId: string): Promise<ToolRunRecord>;
  /** The run once it ended or waits, or after `ms`, whichever is first. */
  waitForToolRun(runId: string, ms: number): Promise<ToolRunRecord>;
  cancelToolRun(runId: string): Promise<ToolRunRecord>;
  /** Decides the approval the caller's run waits at, as the caller (editor role). */
  decideApproval(runId: string, nodeId: string, decision: ApprovalDecision): Promise<void>;
}
