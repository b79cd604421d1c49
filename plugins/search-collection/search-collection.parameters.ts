import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { CollectionParameter, Parameter } from 'workflow-collection-service/sdk';

const wholeNumber = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value);

export class SearchCollectionParameters {
  @CollectionParameter({
    description: 'Id of the collection to search (`col_...`). The user who started the run needs at least the viewer role on it.',
  })
  collectionId: string;

  @Parameter({
    displayName: 'Query',
    description: 'What to look for, in natural language; as an expression, e.g. `input.question`.',
    schema: { examples: ['How long does the dough rise?'] },
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(8192)
  query: string;

  @Parameter({ displayName: 'Top K', description: 'Passages to return, 1 to 100, nearest first.' })
  @Transform(wholeNumber)
  @IsInt()
  @Min(1)
  @Max(100)
  topK: number = 10;

  @Parameter({ displayName: 'Offset', description: 'Passages to skip, for paging.' })
  @Transform(wholeNumber)
  @IsInt()
  @Min(0)
  @Max(1000)
  offset: number = 0;

  @Parameter({
    displayName: 'Mode',
    description: '`vector` ranks by meaning (cosine distance); `hybrid` also ranks by the words of the query (BM25) and fuses the two.',
  })
  @IsIn(['vector', 'hybrid'])
  mode: 'vector' | 'hybrid' = 'vector';

  @Parameter({
    displayName: 'Filter',
    description:
      'Only passages of files this filter keeps, as the search API takes it: e.g. `{"field": "metadata.year", "gte": 2020}`, ' +
      '`{"and": [{"field": "type", "eq": "application/pdf"}, {"not": {"field": "metadata.draft", "eq": true}}]}`; ' +
      'fields: id, name, type, size, createdAt, pages, title, author, metadata.<key>.',
    schema: { type: 'object', examples: [{ field: 'metadata.department', eq: 'legal' }] },
  })
  @IsOptional()
  @IsObject()
  filter?: Record<string, unknown>;
}
