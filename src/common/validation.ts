import { ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError, FieldError } from './app-error';

/** Flattens nested class-validator errors into `{field: 'a.b[0].c', reason}` pairs. */
export function fieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent
      ? /^\d+$/.test(error.property)
        ? `${parent}[${error.property}]`
        : `${parent}.${error.property}`
      : error.property;
    const own = Object.values(error.constraints ?? {}).map((reason) => ({ field, reason }));
    return [...own, ...fieldErrors(error.children ?? [], field)];
  });
}

/** Unknown fields are refused rather than dropped, so a typo never silently loses data. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    exceptionFactory: (errors) => AppError.validation(fieldErrors(errors)),
  });
}
