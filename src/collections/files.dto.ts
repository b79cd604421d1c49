import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, MinLength } from 'class-validator';
import { PageQueryDto } from '../common/pagination';
import { FILE_STATUSES, FileStatus } from '../storage/ports/file-store.port';
import { MAX_FILE_NAME_CHARS } from './files.service';

const trimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class AddFileDto {
  @ApiProperty({ description: 'File name shown in listings and search results', minLength: 1, maxLength: MAX_FILE_NAME_CHARS })
  @Transform(trimmed)
  @IsString()
  @Length(1, MAX_FILE_NAME_CHARS)
  name: string;

  @ApiProperty({
    description: 'Where to get the file: an http(s) URL, downloaded by the service, or a data: URL carrying the bytes',
    example: 'https://example.com/report.pdf',
  })
  @Transform(trimmed)
  @IsString()
  @MinLength(1)
  url: string;
}

/** Documents the multipart form of the upload endpoint for Swagger; parsing is done by @fastify/multipart. */
export class UploadFileDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The file' })
  file: unknown;

  @ApiProperty({ required: false, description: 'File name; defaults to the uploaded file name' })
  name?: string;
}

export class ListFilesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only files in these statuses, comma-separated, e.g. indexed or pending,processing', example: 'indexed' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : value))
  @IsIn(FILE_STATUSES, { each: true, message: `status must be among ${FILE_STATUSES.join(', ')}` })
  status?: FileStatus[];
}
