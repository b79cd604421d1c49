import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { pageOf, timestamp } from '../common/response-schemas';
import { FILE_LANES, FILE_STATUSES, FileLane, FileProgress, FileStatus, PROGRESS_STAGES, ProgressStage } from '../domain/file.model';
import { ROLES, Role } from '../domain/membership.model';
import type { CollectionStats } from './collections.service';
import type { CollectionView } from './collections.dto';
import type { FileContent, FileView } from './files.service';

/** What the collection and file endpoints answer, for OpenAPI. */

export class CollectionDto implements CollectionView {
  @ApiProperty({ example: 'col_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty(timestamp())
  createdAt: string;

  @ApiProperty(timestamp())
  updatedAt: string;

  @ApiProperty({ enum: ROLES, description: 'Your role on the collection' })
  role: Role;
}

export const CollectionPageDto = pageOf(CollectionDto, 'CollectionPageDto');

export class FileCountsDto {
  @ApiProperty({ type: 'integer' })
  total: number;

  @ApiProperty({ type: 'integer' })
  pending: number;

  @ApiProperty({ type: 'integer' })
  processing: number;

  @ApiProperty({ type: 'integer' })
  indexed: number;

  @ApiProperty({ type: 'integer' })
  error: number;
}

export class CollectionStatsDto implements CollectionStats {
  @ApiProperty()
  collectionId: string;

  @ApiProperty({ type: FileCountsDto, description: 'Number of files by ingestion status' })
  files: FileCountsDto;

  @ApiProperty({ type: 'integer', description: 'Total size of the files, in bytes' })
  bytes: number;

  @ApiProperty({ type: 'integer', description: 'Number of searchable passages' })
  chunks: number;

  @ApiProperty({ type: 'integer', description: 'Characters of extracted text' })
  characters: number;
}

export class FileProgressDto implements FileProgress {
  @ApiProperty({ enum: PROGRESS_STAGES, description: 'queued, then fetching, extracting, embedding, indexing' })
  stage: ProgressStage;

  @ApiProperty({
    type: 'integer',
    description:
      'Done so far, of total: bytes while fetching; parts of the document (PDF pages, sheets, slides) while embedding and indexing',
  })
  done: number;

  @ApiProperty({
    type: 'integer',
    description: 'The whole of the stage, in the same unit as done; 0 while unknown (queued, extracting, a download of unknown size)',
  })
  total: number;
}

export class FileDto implements FileView {
  @ApiProperty({ example: 'fle_0123456789abcdefghijklmno' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'MIME type: as declared until the bytes were read, then as detected', example: 'application/pdf' })
  type: string;

  @ApiProperty({ type: 'integer', description: 'Size in bytes (0 until downloaded)' })
  size: number;

  @ApiProperty({ enum: FILE_STATUSES, description: 'pending and processing: being ingested; indexed: searchable; error: ingestion failed' })
  status: FileStatus;

  @ApiProperty(timestamp())
  createdAt: string;

  @ApiPropertyOptional({ description: 'Why ingestion failed; only with status error' })
  error?: string;

  @ApiProperty({
    enum: FILE_LANES,
    description:
      'The ingestion lane: large for files over INGEST_LARGE_BYTES bytes or PDFs over INGEST_LARGE_PAGES pages, ingested beside the standard lane so they never hold small files',
  })
  lane: FileLane;

  @ApiPropertyOptional({ type: FileProgressDto, description: 'Where ingestion stands; only while pending or processing' })
  progress?: FileProgressDto;

  @ApiPropertyOptional({
    description:
      "Only with status pending: why the last try failed for the service's own reasons (disk full, database unavailable); the file is tried again automatically",
  })
  retryReason?: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Your own fields: strings, numbers, booleans, dates (ISO 8601, UTC) and lists of strings; {} when none',
  })
  metadata: Record<string, string | number | boolean | string[]>;

  @ApiPropertyOptional({ type: 'integer', description: 'Pages (PDF), slides or sheets, once extracted' })
  pages?: number;

  @ApiPropertyOptional({ description: "The document's own title, when its format carries one" })
  title?: string;

  @ApiPropertyOptional({ description: "The document's own author, when its format carries one" })
  author?: string;
}

export const FilePageDto = pageOf(FileDto, 'FilePageDto');

export class FileContentDto implements FileContent {
  @ApiProperty()
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'MIME type' })
  type: string;

  @ApiProperty({ description: 'The extracted text, passage after passage' })
  content: string;
}

export class PassageDto {
  @ApiProperty({ description: 'Passage id, as a search result names it' })
  id: string;

  @ApiProperty()
  fileId: string;

  @ApiProperty()
  fileName: string;

  @ApiProperty({ type: 'integer', description: 'Position of the passage within its file, from 0' })
  index: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Page of the file the passage starts on, when the format has pages' })
  page: number | null;

  @ApiProperty()
  content: string;
}
