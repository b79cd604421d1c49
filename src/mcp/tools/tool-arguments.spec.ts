import { IsInt, IsOptional, IsString, Length, Min } from 'class-validator';
import { AppError, ErrorCode } from '../../common/app-error';
import { checkInput, Field } from '../../common/input-validation';
import { CollectionRef, FileRef } from './inputs';
import { toolArguments } from './tool-arguments';

class Body {
  @Field({ description: 'REST wording' })
  @IsString()
  @Length(1, 5)
  text: string;

  @Field()
  @IsOptional()
  @IsInt()
  @Min(0)
  offset?: number;

  @Field()
  @IsOptional()
  @IsString()
  restOnly?: string;
}

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect((error as AppError).code).toBe(ErrorCode.VALIDATION_FAILED);
    return (error as AppError).details;
  }
  throw new Error('expected a refusal');
};

describe('tool arguments over a shared DTO', () => {
  const args = toolArguments({
    ref: CollectionRef,
    input: Body,
    names: { query: 'text', offset: 'offset' },
    descriptions: { query: 'What a model is told' },
  });

  it('publishes the interface names with the rules of the DTO fields they map to', () => {
    expect(args.schema).toEqual({
      type: 'object',
      properties: {
        collection_id: { description: expect.any(String), type: 'string', minLength: 1, maxLength: 200 },
        query: { description: 'What a model is told', type: 'string', minLength: 1, maxLength: 5 },
        offset: { type: 'number', multipleOf: 1, minimum: 0 },
      },
      required: ['collection_id', 'query'],
      additionalProperties: false,
    });
  });

  it('hands the run the ids and a DTO instance', () => {
    const parsed = args.parse({ collection_id: 'col_1', query: 'why', offset: 3 });
    expect(parsed.collection_id).toBe('col_1');
    expect(parsed.input).toBeInstanceOf(Body);
    expect(parsed.input).toEqual({ text: 'why', offset: 3 });
  });

  it('names each refusal by the argument, not by the DTO field, and refuses fields the tool does not offer', () => {
    expect(refusal(() => args.parse({ collection_id: 'col_1', query: 'too long', restOnly: 'x', text: 'y' }))).toEqual({
      fields: [
        { field: 'query', reason: 'query must be shorter than or equal to 5 characters' },
        { field: 'restOnly', reason: 'property restOnly should not exist' },
        { field: 'text', reason: 'property text should not exist' },
      ],
    });
    expect(refusal(() => args.parse({ offset: -1 }))).toEqual({
      fields: [
        { field: 'collection_id', reason: 'is required' },
        { field: 'query', reason: 'is required' },
        { field: 'offset', reason: 'offset must not be less than 0' },
      ],
    });
    expect(refusal(() => args.parse({ collection_id: 'col_1', query: 'a', constructor: 1 }))).toEqual({
      fields: [{ field: 'constructor', reason: 'property constructor should not exist' }],
    });
  });

  it('will not build a tool that hides a required DTO field', () => {
    expect(() => toolArguments({ input: Body, names: { offset: 'offset' } })).toThrow(/required fields text need an argument name/);
  });
});

describe('the ids of a tool, checked quickly', () => {
  const ids = toolArguments({ ref: FileRef });

  it('accepts exactly what class-validator accepts, and refuses the rest in its words', () => {
    const cases: Record<string, unknown>[] = [
      { collection_id: 'col_1', file_id: 'fle_1' },
      { collection_id: 'c'.repeat(200), file_id: '😀'.repeat(200) },
      { collection_id: 'c'.repeat(201), file_id: 'fle_1' },
      { collection_id: '', file_id: 'fle_1' },
      { collection_id: 7, file_id: 'fle_1' },
      { collection_id: 'col_1' },
      { collection_id: 'col_1', file_id: 'fle_1', extra: true },
      { collection_id: null, file_id: 'fle_1' },
    ];
    for (const args of cases) {
      const quick = (() => {
        try {
          return { value: { ...ids.parse(args) } };
        } catch (error) {
          return { errors: (error as AppError).details };
        }
      })();
      const { value, errors } = checkInput(FileRef, args);
      if (errors.length) expect(quick).toEqual({ errors: { fields: errors } });
      else expect(quick).toEqual({ value: { ...value, input: {} } });
    }
  });
});
