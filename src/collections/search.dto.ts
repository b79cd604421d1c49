import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { Field, trimmed, wholeNumberFromString } from '../common/input-validation';

/**
 * The search input of both doors: the REST API and the MCP tool service_search_collection validate
 * with this class (its `text` is the tool's `query`), so it must stay free of Nest.
 */

export const MAX_TOP_K = 100;
export const DEFAULT_TOP_K = 10;
export const MAX_OFFSET = 1000;
export const MAX_QUERY_CHARS = 8192;
export const SEARCH_MODES = ['vector', 'hybrid'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export class SearchDto {
  @Field({ description: 'What to look for, in natural language' })
  @Transform(trimmed)
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_QUERY_CHARS)
  text: string;

  @Field({
    description: 'Number of passages to return: a number or a numeric string',
    schema: { type: undefined, oneOf: [{ type: 'integer' }, { type: 'string', pattern: '^\\d+$' }], default: DEFAULT_TOP_K },
  })
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_K)
  top_k?: number;

  @Field({ description: 'Passages to skip, for paging', schema: { default: 0 } })
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  offset?: number;

  @Field({
    description: '`vector` ranks by cosine distance; `hybrid` fuses that ranking with BM25 keyword ranking',
    schema: { default: 'vector' },
  })
  @IsOptional()
  @IsIn(SEARCH_MODES)
  mode?: SearchMode;
}
