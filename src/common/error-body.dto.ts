import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ErrorCode } from './app-error';
import type { ErrorBody } from './http-error.filter';

/** The OpenAPI description of the one error body of the HTTP API (see HttpErrorFilter); both are extra models of the document. */

export class FieldErrorDto {
  @ApiProperty({ description: 'The bad field: a dotted path with [index] for array items, e.g. definition.nodes[0].id', example: 'name' })
  field: string;

  @ApiProperty({ description: 'What is wrong with it; a missing required field says "is required"', example: 'is required' })
  reason: string;
}

export class ErrorBodyDto implements ErrorBody {
  @ApiProperty({ enum: ErrorCode, enumName: 'ErrorCode', description: 'Stable error code' })
  code: ErrorCode;

  @ApiProperty({ description: 'What went wrong and, where it helps, what to do about it' })
  message: string;

  @ApiPropertyOptional({
    type: 'object',
    properties: {
      fields: { type: 'array', items: { $ref: getSchemaPath(FieldErrorDto) }, description: 'With VALIDATION_FAILED: each bad field' },
    },
    additionalProperties: true,
    description:
      'Code-specific details: the bad fields of a validation failure, the allowed methods of a 405, retryAfterSeconds of a 429, ...',
  })
  details?: unknown;

  @ApiProperty({ description: 'The request id, also in the x-request-id header: quote it when reporting a problem' })
  requestId: string;
}
