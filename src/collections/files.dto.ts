import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Length, MinLength } from 'class-validator';
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
