import 'reflect-metadata';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, Min, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { AppError, ErrorCode } from './app-error';
import { IsAbsoluteUrl } from './class-schema';
import {
  checkInput,
  dtoSchema,
  Field,
  prototypeKeyError,
  REQUIRED,
  trimmed,
  validateInput,
  wholeNumberFromString,
} from './input-validation';

class Inner {
  @IsInt()
  n: number;
}

class Sample {
  @Field({ description: 'A name' })
  @Transform(trimmed)
  @IsString()
  @Length(1, 10)
  name: string;

  @Field()
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(0)
  @Max(5)
  count?: number;

  @Field()
  @IsIn(['a', 'b'])
  kind: 'a' | 'b' = 'a';

  @Field()
  @IsOptional()
  @IsAbsoluteUrl()
  url?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => Inner)
  inner?: Inner;
}

const failure = (run: () => unknown): AppError => {
  try {
    run();
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected a failure');
};

describe('shared input validation', () => {
  it('gives an absent required field one reason, and a present wrong one each of its reasons', () => {
    expect(checkInput(Sample, {}).errors).toEqual([{ field: 'name', reason: REQUIRED }]);
    const wrong = checkInput(Sample, { name: 42 }).errors;
    expect(wrong.map((e) => e.field)).toEqual(['name', 'name']);
    expect(wrong.map((e) => e.reason)).toEqual(expect.arrayContaining(['name must be a string']));
    expect(checkInput(Sample, { name: 'x', inner: {} }).errors).toEqual([{ field: 'inner.n', reason: REQUIRED }]);
    expect(checkInput(Sample, { name: 'x', kind: null }).errors).toEqual([
      { field: 'kind', reason: 'kind must be one of the following values: a, b' },
    ]);
  });

  it('transforms as the REST pipe does: trims, converts whole-number strings only, keeps defaults', () => {
    expect(validateInput(Sample, { name: '  ok ', count: '3' })).toMatchObject({ name: 'ok', count: 3, kind: 'a' });
    expect(checkInput(Sample, { name: 'ok', count: '1.5' }).errors).toContainEqual({
      field: 'count',
      reason: 'count must be an integer number',
    });
    expect(checkInput(Sample, { name: 'ok', count: '-1' }).errors).toEqual([{ field: 'count', reason: 'count must not be less than 0' }]);
  });

  it('refuses unknown fields, and names a prototype key rather than drop it or fail on it', () => {
    const error = failure(() => validateInput(Sample, { name: 'ok', extra: 1 }));
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    expect(error.details).toEqual({ fields: [{ field: 'extra', reason: 'property extra should not exist' }] });
    const reason = (key: string) => `is a key named "${key}": keys named constructor, prototype or __proto__ are not accepted`;
    expect(checkInput(Sample, { name: 'ok', constructor: 'c' }).errors).toEqual([{ field: 'constructor', reason: reason('constructor') }]);
    expect(checkInput(Sample, { name: 'ok', extra: [{ a: 1 }, { b: { prototype: {} } }] }).errors).toEqual([
      { field: 'extra[1].b.prototype', reason: reason('prototype') },
    ]);
    expect(checkInput(Sample, JSON.parse('{"name":"ok","x":{"__proto__":{"admin":true}}}')).errors).toEqual([
      { field: 'x.__proto__', reason: reason('__proto__') },
    ]);
    // A value, not a key, and a class's own object (an upload's buffer), are not refused for this.
    expect(prototypeKeyError({ name: 'constructor', file: Buffer.from('{"constructor":1}'), list: ['prototype'] })).toBeUndefined();
  });

  it('answers an empty input the same way every time, for a DTO that accepts it and for one that does not', () => {
    class AllOptional {
      @IsOptional()
      @IsIn(['test', 'production'])
      runType: string = 'production';
    }
    for (let i = 0; i < 3; i++) {
      const { value, errors } = checkInput(AllOptional, {});
      expect(errors).toEqual([]);
      expect(value).toBeInstanceOf(AllOptional);
      expect(value.runType).toBe('production');
      expect(checkInput(Sample, {}).errors.map((e) => e.reason)).toContain(REQUIRED);
    }
    // Once an empty input is known to be valid, a non-empty one is still checked.
    expect(checkInput(AllOptional, { runType: 'staging' }).errors).toEqual([
      { field: 'runType', reason: expect.stringContaining('runType') },
    ]);
  });

  it('hands a valid empty input a copy of its first result, not a class built again, and never one shared', () => {
    let built = 0;
    class Plain {
      @IsOptional()
      @IsIn(['test', 'production'])
      runType: string = 'production';
      constructor() {
        built++;
      }
    }
    class WithList {
      @IsOptional()
      @IsString({ each: true })
      tags: string[] = [];
    }
    const first = checkInput(Plain, {}).value;
    const madeOnce = built;
    const values = [checkInput(Plain, {}).value, checkInput(Plain, {}).value];
    // Defaults of plain values: copied, class-transformer not run again (it builds the class).
    expect(built).toBe(madeOnce);
    for (const value of values) {
      expect(value).toBeInstanceOf(Plain);
      expect(value).toEqual(first);
      expect(value).not.toBe(first);
    }
    values[0].runType = 'test';
    expect(checkInput(Plain, {}).value.runType).toBe('production');
    // A default that is an object is built anew every time, so no caller shares it.
    const lists = [checkInput(WithList, {}).value, checkInput(WithList, {}).value, checkInput(WithList, {}).value];
    lists[1].tags.push('x');
    expect(lists.map((value) => value.tags)).toEqual([[], ['x'], []]);
  });

  it('accepts any absolute URL and refuses the rest', () => {
    expect(checkInput(Sample, { name: 'ok', url: 'data:text/plain,hi' }).errors).toEqual([]);
    expect(checkInput(Sample, { name: 'ok', url: 'ftp://example.com/a' }).errors).toEqual([]);
    expect(checkInput(Sample, { name: 'ok', url: '/relative' }).errors).toEqual([
      { field: 'url', reason: 'url must be an absolute URL, e.g. https://example.com/report.pdf' },
    ]);
  });

  it('derives the JSON Schema from the same rules', () => {
    expect(dtoSchema(Sample).schema).toEqual({
      type: 'object',
      properties: {
        name: { description: 'A name', type: 'string', minLength: 1, maxLength: 10 },
        count: { type: 'integer', minimum: 0, maximum: 5 },
        kind: { type: 'string', enum: ['a', 'b'], default: 'a' },
        url: { format: 'uri' },
        inner: {},
      },
      required: ['name'],
      additionalProperties: false,
    });
  });
});
