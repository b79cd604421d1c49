import 'reflect-metadata';
import { ArgumentMetadata } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { AppError } from './app-error';
import { wholeNumberFromString } from './input-validation';
import { createValidationPipe } from './validation';

class WaitQuery {
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(1)
  @Max(30)
  wait?: number;

  @IsOptional()
  @IsIn(['a', 'b'])
  kind?: string;
}

const asQuery: ArgumentMetadata = { type: 'query', metatype: WaitQuery, data: undefined };
/** Fastify's query objects have no prototype. */
const query = (fields: Record<string, string>) => Object.assign(Object.create(null) as object, fields);

describe('the REST validation pipe', () => {
  it('answers a query string it found valid before without validating it again, with a new object each time', async () => {
    const pipe = createValidationPipe();
    const validated = jest.spyOn(pipe as unknown as { validate(...args: unknown[]): unknown }, 'validate');

    const first = (await pipe.transform(query({ wait: '10' }), asQuery)) as WaitQuery;
    first.wait = 99;
    const second = (await pipe.transform(query({ wait: '10' }), asQuery)) as WaitQuery;

    expect(second).toBeInstanceOf(WaitQuery);
    expect(second).toEqual(Object.assign(new WaitQuery(), { wait: 10 }));
    expect(second).not.toBe(first);
    expect(validated).toHaveBeenCalledTimes(1);

    // Another query is validated (and refused) as ever, each time it comes.
    for (let i = 0; i < 2; i++) await expect(pipe.transform(query({ wait: '0' }), asQuery)).rejects.toBeInstanceOf(AppError);
    await expect(pipe.transform(query({ wait: '10', kind: 'c' }), asQuery)).rejects.toBeInstanceOf(AppError);
    expect(await pipe.transform(query({ wait: '10', kind: 'a' }), asQuery)).toEqual(
      Object.assign(new WaitQuery(), { wait: 10, kind: 'a' }),
    );
    expect(validated).toHaveBeenCalledTimes(5);
  });

  it('validates a body every time, even the same one', async () => {
    const pipe = createValidationPipe();
    const validated = jest.spyOn(pipe as unknown as { validate(...args: unknown[]): unknown }, 'validate');
    const asBody: ArgumentMetadata = { type: 'body', metatype: WaitQuery, data: undefined };
    await pipe.transform({ wait: 3 }, asBody);
    await pipe.transform({ wait: 3 }, asBody);
    expect(validated).toHaveBeenCalledTimes(2);
  });
});
