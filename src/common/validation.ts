import { ArgumentMetadata, PipeTransform, ValidationPipe } from '@nestjs/common';
import { AppError } from './app-error';
import { nestsDeeperThan, TOO_DEEP } from './json-depth';
import {
  fieldErrors,
  knownValidQuery,
  knownValidWhenEmpty,
  prototypeKeyError,
  rememberValid,
  rememberValidQuery,
  VALIDATOR_OPTIONS,
} from './input-validation';

/**
 * The REST door's validation: the options `validateInput` uses for the MCP tools, so both answer
 * alike. A body DTO is an object: an array or a bare value is refused as such, where the pipe would
 * validate it as an object keyed 0, 1, ... and report those keys. A body nested too deep for the
 * recursive code after it is refused first (json-depth.ts), and so is a key Nest's pipe would
 * silently delete (prototypeKeyError). An empty input skips the work
 * once its DTO is known to accept it (see `knownValidWhenEmpty`), and so does a query string seen
 * valid before (`knownValidQuery`).
 */
class InputValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const notAnObject = value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value));
    if (metadata.type === 'body' && notAnObject && this.toValidate(metadata)) {
      throw AppError.validation([{ field: 'body', reason: 'must be a JSON object' }]);
    }
    if (metadata.type === 'body' && nestsDeeperThan(value)) throw AppError.validation([{ field: 'body', reason: TOO_DEEP }]);
    const dto = this.toValidate(metadata) ? (metadata.metatype as (new () => object) | undefined) : undefined;
    if (!dto) return super.transform(value, metadata);
    const query = metadata.type === 'query';
    const known = knownValidWhenEmpty(dto, value) ?? (query ? knownValidQuery(dto, value) : undefined);
    if (known) return known;
    const keyed = prototypeKeyError(value);
    if (keyed) throw AppError.validation([keyed]);
    const result: unknown = await super.transform(value, metadata);
    rememberValid(dto, value, result);
    if (query) rememberValidQuery(dto, value, result);
    return result;
  }

  /** A path parameter stays the string it is: one that is a number is read by a pipe of its own (VersionNumberPipe), not `+value` (`0x1`, `1e0`). */
  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'param' ? value : super.transformPrimitive(value, metadata);
  }
}

export function createValidationPipe(): ValidationPipe {
  return new InputValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    exceptionFactory: (errors) => AppError.validation(fieldErrors(errors)),
  });
}

/** A version number in a path (a workflow's, a node type's): at most 9 digits, far past any there are. */
export const VERSION_NUMBER = /^[1-9][0-9]{0,8}$/;

/**
 * A path parameter that is a version number: decimal digits, from 1. Nest's ParseIntPipe takes
 * `0x1`, `1e3` and `-1` too, and refuses the rest without naming the parameter.
 * @throws AppError VALIDATION_FAILED naming the parameter
 */
export class VersionNumberPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    if (VERSION_NUMBER.test(value)) return Number(value);
    throw AppError.validation([
      {
        field: metadata.data ?? 'version',
        reason: `must be a version number: a whole number from 1, in digits (got "${value.slice(0, 20)}")`,
      },
    ]);
  }
}
