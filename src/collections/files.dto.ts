import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { IsAbsoluteUrl } from '../common/class-schema';
import { Field, trimmed } from '../common/input-validation';
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
  @Matches(/^[^\u0000-\u001f\u007f]*$/, { message: 'name must not contain control characters' })
  name: string;

  @Field({
    description: 'Where to get the file: an http(s) URL, downloaded by the service, or a data: URL carrying the bytes',
    schema: { example: 'https://example.com/report.pdf' },
  })
  @Transform(trimmed)
  @IsString()
  @IsAbsoluteUrl()
  url: string;
}

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
  @IsIn(FILE_STATUSES, { each: true, message: `status must be among ${FILE_STATUSES.join(', ')}` })
  status?: FileStatus[];
}
