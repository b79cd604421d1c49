import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
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
/** Most collections one search reads: each is its own index query. */
export const MAX_SEARCH_COLLECTIONS = 20;
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

/** The options of search beyond the query: the same on one collection and across several. */
export class SearchOptionsDto extends SearchDto {
  @Field({
    description:
      'Only passages of files this filter keeps: {"field": "metadata.year", "gte": 2020}, {"field": "type", "in": [...]}, ' +
      '{"field": "id", "eq": "fle_..."}, {"field": "metadata.x", "exists": true}, combined with {"and": [...]}, {"or": [...]}, {"not": {...}}',
    schema: {
      type: 'object',
      example: {
        and: [
          { field: 'type', eq: 'application/pdf' },
          { field: 'metadata.year', gte: 2020 },
        ],
      },
    },
  })
  @IsOptional()
  @IsObject()
  filter?: Record<string, unknown>;

  @Field({ description: 'At most this many passages of one file', schema: { example: 2 } })
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_K)
  per_file?: number;

  @Field({
    description:
      'Diversity by maximal marginal relevance: 1 ranks by relevance alone, lower values favour passages unlike those already chosen (0.5 is common)',
  })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  mmr_lambda?: number;

  @Field({ description: 'Only passages whose score (1 - cosine distance, from -1 to 1) is at least this' })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(-1)
  @Max(1)
  min_score?: number;
}

/** A search across collections: the ones named, or every collection the caller can read. */
export class MultiSearchDto extends SearchOptionsDto {
  @Field({ description: `Ids of the collections to search, 1 to ${MAX_SEARCH_COLLECTIONS}; or set all` })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SEARCH_COLLECTIONS)
  @IsString({ each: true })
  @Length(1, 200, { each: true })
  collection_ids?: string[];

  @Field({ description: `true: every collection you can read (at most ${MAX_SEARCH_COLLECTIONS})` })
  @IsOptional()
  @IsBoolean()
  all?: boolean;
}
