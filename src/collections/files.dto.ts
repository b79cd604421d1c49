import { Transform } from 'class-transformer';
import { ArrayMinSize, IsIn, IsObject, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { IsAbsoluteUrl } from '../common/class-schema';
import { Field, NoControlCharacters, trimmed } from '../common/input-validation';
import { PageQueryDto } from '../common/pagination';
import { FILE_STATUSES, FileStatus } from '../domain/file.model';

/**
 * The file inputs of both doors: the REST API and the MCP tools validate with these classes (see
 * src/mcp/tools/tool-arguments.ts), so they must stay free of Nest.
 */

export const MAX_FILE_NAME_CHARS = 255;
export const MAX_URL_CHARS = 8192;

export class AddFileDto {
  @Field({ description: 'File name shown in listings and search results, with its extension, e.g. report.pdf' })
  @Transform(trimmed)
  @IsString()
  @Length(1, MAX_FILE_NAME_CHARS)
  @NoControlCharacters()
  name: string;

  @Field({
    description: 'Where to get the file: an http(s) URL, downloaded by the service, or a data: URL carrying the bytes',
    schema: { example: 'https://example.com/report.pdf' },
  })
  @Transform(trimmed)
  @IsString()
  @IsAbsoluteUrl()
  url: string;

  @Field({
    description:
      'Your own fields, searchable with filters: a flat object of strings, numbers, booleans, ISO 8601 dates and lists of strings',
    schema: { type: 'object', example: { department: 'legal', year: 2024, tags: ['contract'] } },
  })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

export class PatchFileDto {
  @Field({
    description:
      'Changes to the metadata, as a JSON merge patch: a key set to null is removed, any other value replaces it; keys not named stay',
    schema: { type: 'object', example: { reviewed: true, draft: null } },
  })
  @IsObject()
  metadata: Record<string, unknown>;
}

/** Longest `filter` a listing takes as query text; a search takes the same filter in its body. */
export const MAX_FILTER_TEXT_CHARS = 16_384;

export class ListFilesQueryDto extends PageQueryDto {
  @Field({
    description: 'Only files in these statuses, comma-separated, e.g. indexed or pending,processing',
    schema: { example: 'indexed' },
  })
  @IsOptional()
  @Transform(({ value }) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : value,
  )
  @ArrayMinSize(1, { message: 'status must name at least one status: leave it out for files in any status' })
  @IsIn(FILE_STATUSES, { each: true, message: `status must be among ${FILE_STATUSES.join(', ')}` })
  status?: FileStatus[];

  @Field({
    description: 'Only files this filter keeps, as JSON (the filter of search), e.g. {"field":"metadata.year","gte":2020}',
    schema: { example: '{"field":"type","eq":"application/pdf"}' },
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_FILTER_TEXT_CHARS)
  filter?: string;
}
