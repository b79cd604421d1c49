import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { MAX_OFFSET, MAX_QUERY_CHARS, MAX_TOP_K, SearchMode } from './search.service';

/** Clients send counts as strings too (the interface's own example does); only whole numbers convert. */
const integerOrNumericString = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;

export class SearchDto {
  @ApiProperty({ description: 'What to look for, in natural language', minLength: 1, maxLength: MAX_QUERY_CHARS })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_QUERY_CHARS)
  text: string;

  @ApiPropertyOptional({
    description: 'Number of passages to return: a number or a numeric string',
    minimum: 1,
    maximum: MAX_TOP_K,
    default: 10,
    oneOf: [{ type: 'integer' }, { type: 'string', pattern: '^\\d+$' }],
  })
  @IsOptional()
  @Transform(integerOrNumericString)
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_K)
  top_k?: number;

  @ApiPropertyOptional({ description: 'Passages to skip, for paging', minimum: 0, maximum: MAX_OFFSET, default: 0 })
  @IsOptional()
  @Transform(integerOrNumericString)
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  offset?: number;

  @ApiPropertyOptional({
    description: '`vector` ranks by cosine distance; `hybrid` fuses that ranking with BM25 keyword ranking',
    enum: ['vector', 'hybrid'],
    default: 'vector',
  })
  @IsOptional()
  @IsIn(['vector', 'hybrid'])
  mode?: SearchMode;
}
