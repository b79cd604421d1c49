import { z } from 'zod';

/**
 * What the tools hand back, as zod schemas: they yield each tool's declared `outputSchema`, type
 * the backends, and project results onto exactly the declared fields before they leave the server.
 */

export const collectionRecord = z.object({
  id: z.string().describe('Collection id; pass it as collection_id to the other tools'),
  name: z.string(),
  createdAt: z.string().describe('ISO 8601 timestamp, UTC'),
  updatedAt: z.string().describe('ISO 8601 timestamp, UTC'),
  role: z.string().describe('Your role on the collection: viewer (read, search), editor (also add and delete files) or owner'),
});

export const FILE_STATUSES = ['pending', 'processing', 'indexed', 'error'] as const;

export const fileRecord = z.object({
  id: z.string().describe('File id; pass it as file_id to service_delete_file_from_collection'),
  name: z.string(),
  type: z.string().describe('MIME type'),
  size: z.number().describe('Size in bytes (0 until downloaded)'),
  status: z.enum(FILE_STATUSES).describe('pending and processing: being ingested; indexed: searchable; error: ingestion failed, see error'),
  createdAt: z.string().describe('ISO 8601 timestamp, UTC'),
  error: z.string().optional().describe('Why ingestion failed, when status is error'),
});

export const searchHit = z.object({
  id: z.string().describe('Id of the matching passage'),
  content: z.string().describe('Text of the passage'),
  distance: z.number().describe('Cosine distance to the query: smaller is closer'),
  fileId: z.string(),
  fileName: z.string(),
  chunkIndex: z.number().describe('Position of the passage within its file, from 0'),
  page: z.number().optional().describe('Page of the file the passage starts on, when the format has pages'),
  rerankScore: z.number().optional().describe("The reranker's relevance score, for a passage it reranked: larger is more relevant"),
});

export const rerankOutcome = z.object({
  applied: z.boolean().describe("false: the reranker failed, and the passages come in the search's own order"),
  candidates: z.number().describe('Passages given to the reranker, from the top of the ranking'),
  error: z.string().optional().describe('Why the reranking was not applied'),
});

const fileCounts = z.object({
  total: z.number(),
  pending: z.number(),
  processing: z.number(),
  indexed: z.number(),
  error: z.number(),
});

export const collectionStats = z.object({
  collectionId: z.string(),
  files: fileCounts.describe('Number of files by ingestion status'),
  bytes: z.number().describe('Total size of the files, in bytes'),
  chunks: z.number().describe('Number of searchable passages'),
  characters: z.number().describe('Characters of extracted text'),
});

export type CollectionRecord = z.input<typeof collectionRecord>;
export type FileRecord = z.input<typeof fileRecord>;
export type SearchHit = z.input<typeof searchHit>;
export type CollectionStatsRecord = z.input<typeof collectionStats>;
