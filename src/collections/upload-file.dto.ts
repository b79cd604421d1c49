import { ApiProperty } from '@nestjs/swagger';

/** Documents the multipart form of the upload endpoint for Swagger; parsing is done by @fastify/multipart. */
export class UploadFileDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The file' })
  file: unknown;

  @ApiProperty({ required: false, description: 'File name; defaults to the uploaded file name' })
  name?: string;

  @ApiProperty({
    required: false,
    description: 'Your own fields as JSON text: a flat object of strings, numbers, booleans, ISO 8601 dates and lists of strings',
    example: '{"department":"legal","year":2024}',
  })
  metadata?: string;
}
