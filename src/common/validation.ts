import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { AppError } from './app-error';
import { fieldErrors, VALIDATOR_OPTIONS } from './input-validation';

export { fieldErrors };

/**
 * The REST door's validation: the options `validateInput` uses for the MCP tools, so both answer
 * alike. A body DTO is an object: an array or a bare value is refused as such, where the pipe would
 * validate it as an object keyed 0, 1, ... and report those keys.
 */
class InputValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const notAnObject = value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value));
    if (metadata.type === 'body' && notAnObject && this.toValidate(metadata)) {
      throw AppError.validation([{ field: 'body', reason: 'must be a JSON object' }]);
    }
    return super.transform(value, metadata);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new InputValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    exceptionFactory: (errors) => AppError.validation(fieldErrors(errors)),
  });
}
