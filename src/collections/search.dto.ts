// class-transformer's @Type reads the design types reflect-metadata records: loaded here, the DTOs
// work wherever they are imported (the stdio program, a unit spec), not only under the service's entry.
import 'reflect-metadata';
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
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { dtoSchema, Field, NestedObject, trimmed, wholeNumberFromString } from '../common/input-validation';
import { MAX_RERANK_TOP_N, RERANKER_KINDS, RerankerKind } from '../domain/reranker.port';

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

const MAX_URL_CHARS = 2048;
const MAX_MODEL_CHARS = 200;
const MAX_ID_CHARS = 100;

/** How a search is reranked: the configured reranker, or an endpoint the search names with a stored credential. */
export class RerankDto {
  @Field({
    description: 'false leaves the order as it is even when a reranker is configured; true (the default when rerank is given) reranks',
    schema: { default: true },
  })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @Field({ description: `Passages reranked, from the top of the ranking; the service's RERANK_TOP_N (50) unless given` })
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(1)
  @Max(MAX_RERANK_TOP_N)
  top_n?: number;

  @Field({ description: 'A `/rerank` endpoint of its own (its full URL), instead of the one the service is configured with' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_URL_CHARS)
  @Matches(/^https?:\/\/\S+$/, { message: 'url must be an http(s) URL' })
  url?: string;

  @Field({ description: 'The shape `url` speaks: `cohere` (v2), `jina` or `tei` (Hugging Face text-embeddings-inference)' })
  @IsOptional()
  @IsIn(RERANKER_KINDS)
  kind?: RerankerKind;

  @Field({ description: 'The model `url` is asked for (Cohere and Jina)' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_MODEL_CHARS)
  model?: string;

  @Field({
    description:
      'A stored credential (its id) that `url` is called with: you need the viewer role on it, and its allowed hosts must include url',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_ID_CHARS)
  credential_id?: string;
}

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

  @Field({
    description:
      'Reranking of the top passages by a cross-scorer. A hybrid search is reranked by the configured reranker (RERANK_URL) without asking; ' +
      'give this to rerank another mode, to name an endpoint of your own, or `{"enabled": false}` not to rerank',
    schema: dtoSchema(RerankDto).schema,
  })
  @IsOptional()
  @NestedObject(() => RerankDto)
  rerank?: RerankDto;
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
